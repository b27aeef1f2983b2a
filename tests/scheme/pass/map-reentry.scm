;; `map` of one list conses one pair per element as its recursion returns
;; (past its first 1000 elements, a loop and `reverse`). A continuation
;; captured in the procedure and entered again gives a new result and
;; leaves every result returned before as it was (R7RS 6.10).

;; The results of `map` over `lst` with `f`, where the application to
;; the element equal to `at` captures its continuation, entered twice
;; again with -1 and -2: newest first.
(define (results-of-reentry lst at f)
  (let ()
    (define k #f)
    (define results '())
    (define n 0)
    (set! results
          (cons (map (lambda (x)
                       (call/cc (lambda (c) (if (= x at) (set! k c)) (f x))))
                     lst)
                results))
    (set! n (+ n 1))
    (if (< n 3) (k (- n)))
    results))

;; Re-entered at the second of three elements.
(write (results-of-reentry '(1 2 3) 2 (lambda (x) (* x 10)))) (newline)

;; A list of 1500: re-entered in the recursion (element 10), at its bound
;; and in the loop past it (element 1200); each result checked whole.
(define (iota-from a n)
  (let loop ((i (- n 1)) (acc '()))
    (if (< i 0) acc (loop (- i 1) (cons (+ a i) acc)))))
(define (check-reentry at)
  (map (lambda (r)
         (list (length r) (list-ref r (- at 1)) (list-ref r at)
               (list-ref r (+ at 1)) (apply + r)))
       (results-of-reentry (iota-from 0 1500) at (lambda (x) x))))
(write (check-reentry 10)) (newline)
(write (check-reentry 999)) (newline)
(write (check-reentry 1000)) (newline)
(write (check-reentry 1200)) (newline)

;; The applications made, each once, and the order of the values kept.
(let ()
  (define seen '())
  (define r (map (lambda (x) (set! seen (cons x seen)) (- x)) '(1 2 3 4)))
  (write (list r (length seen) (apply + seen))) (newline))

;; A million elements: no deeper stack than a thousand of them.
(let ()
  (define big (iota-from 1 1000000))
  (define r (map (lambda (x) (* 2 x)) big))
  (write (list (length r) (car r) (list-ref r 999) (list-ref r 1000)
               (list-ref r 999999) (apply + r)))
  (newline))

;; Lists of 0, 1, 1000 and 1001 elements, an improper list
;; an error (R7RS 6.10: map takes lists; Guile refuses it too), nested maps, and several lists (stopping at the shortest).
(write (map car '())) (newline)
(write (map (lambda (x) (+ x 1)) '(1))) (newline)
(write (let ((r (map - (iota-from 1 1000)))) (list (length r) (car r) (list-ref r 999))))
(newline)
(write (let ((r (map - (iota-from 1 1001)))) (list (length r) (list-ref r 999) (list-ref r 1000))))
(newline)
(write (guard (e ((error-object? e) (list (error-object-message e) (error-object-irritants e))))
         (map (lambda (x) (* x x)) '(1 2 3 . 4))))
(newline)
(write (map (lambda (l) (map (lambda (x) (* x 10)) l)) '((1 2) () (3)))) (newline)
(write (map + '(1 2 3) '(10 20) '(100 200 300))) (newline)
(write (map cons '(a b c d) '(1 2 3))) (newline)
