; Stored knowledge is usable by name: a free variable that names a stored
; node loads it, with its dependencies bound by their local names.
(define (show x) (write x) (newline))
(arb:create "(define (partition-by p lst)
  (let loop ((l lst) (yes '()) (no '()))
    (cond ((null? l) (cons (reverse yes) (reverse no)))
          ((p (car l)) (loop (cdr l) (cons (car l) yes) no))
          (else (loop (cdr l) yes (cons (car l) no))))))"
  '() "splits a list by a predicate" "function" '("partition-by"))
(arb:create "(define (quicksort lst)
  (if (null? lst) '()
      (let* ((p (car lst))
             (parts (split (lambda (x) (< x p)) (cdr lst))))
        (append (quicksort (car parts)) (list p) (quicksort (cdr parts))))))"
  '((256 . "split")) "快速排序实现" "function" '("quicksort" "qsort"))
(show (quicksort '(3 1 2)))
(show (qsort '(9 7 8)))
(show (map qsort '((2 1) (4 3))))
; the helper's local name is private to quicksort
(show (guard (e (#t (error-object-message e))) (split odd? '(1 2))))
; an update is seen at once, also by code that used the old version
(define (sort-twice l) (quicksort (quicksort l)))
(arb:update 256 '(("code" . "(define (partition-by p lst) (cons (filter p lst) (filter (lambda (x) (not (p x))) lst)))")))
(show (sort-twice '(5 4 6)))
; a session definition takes precedence
(define (qsort l) 'mine)
(show (qsort '(1)))
; a constant and an expression node
(arb:create "(define answer 42)" '() "the answer" "constant" '("answer"))
(arb:create "(lambda (x) (* x x))" '() "squares a number" "function" '("square-it"))
(show (+ answer 1))
(show (square-it 7))
; a name two nodes share is ambiguous
(arb:create "(define answer 43)" '() "another answer" "constant" '("answer"))
(show (guard (e (#t (error-object-message e))) answer))
; switching versions changes what names mean
(show (arb:switch-version 3))
(show (guard (e (#t (error-object-message e))) answer))
(show (quicksort '(2 1)))
; macros in stored code work inside it
(arb:create "(define-syntax swap! (syntax-rules () ((_ a b) (let ((t a)) (set! a b) (set! b t)))))
(define (swapped x y) (swap! x y) (list x y))" '() "swap" "function" '("swapped"))
(show (swapped 1 2))
; errors inside stored code name the node
(arb:create "(define (broken x) (car x))" '() "broken" "function" '("broken"))
(show (guard (e (#t (error-object-message e))) (broken 5)))
(arb:create "(define oops (car '()))" '() "fails when loaded" "constant" '("oops"))
(show (guard (e (#t (error-object-message e))) oops))
(show (guard (e (#t (error-object-message e))) oops))
