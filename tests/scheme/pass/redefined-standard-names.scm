;; A program's own definitions of standard names are the program's: the
;; engine's procedures (map, guard, sort, string ports...) keep using the
;; engine's, while the program's code sees its own, also in code written
;; before the definition.
(define (palindrome? l) (equal? l (reverse l)))
(define calls 0)
(define (reverse l)                     ; counts its calls, reverses
  (set! calls (+ calls 1))
  (let loop ((l l) (acc '()))
    (if (null? l) acc (loop (cdr l) (cons (car l) acc)))))
(write (map (lambda (x) (* x x)) '(1 2 3))) (newline)
(write (palindrome? '(1 2 1))) (newline)
(write calls) (newline)                 ; 1: map did not call it

(define (append . lists) 'mine)         ; wrong on purpose
(write (list-copy '(1 2 3))) (newline)
(write (call-with-values (lambda () (values 1 2)) list)) (newline)
(write (append '(1) '(2))) (newline)

(define (length l) -1)
(write (vector-map + #(1 2) #(3 4))) (newline)
(write (string-map char-upcase "abc")) (newline)
(write (length '(1 2 3))) (newline)

(define (raise obj) 'not-raised)        ; guard still catches
(write (guard (e ((symbol? e) (list 'caught e))) (raise-continuable 'x))) (newline)
(write (guard (e ((error-object? e) 'caught)) (car '()) 'no)) (newline)
(write (raise 'y)) (newline)

(define (apply f . args) 'mine)
(write (let-values (((a b) (values 1 2))) (+ a b))) (newline)
(write (let ((p (open-output-string))) (write 'out p) (get-output-string p)))
(newline)
(write (apply + 1 '(2 3))) (newline)

;; Even the primitives the compiler inlines: the engine's code keeps the
;; original, the program's code calls its own.
(define (car x) 'my-car)
(define (cdr x) '())
(write (map (lambda (x) (+ x 1)) '(1 2 3))) (newline)
(write (assoc 2 '((1 . a) (2 . b)))) (newline)
(write (car '(1 2))) (newline)
