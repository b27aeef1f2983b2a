;; The compiler runs an `if` whose test is an inline primitive, a primitive
;; on a local and a small integer given as an argument, and a local
;; returned, each as one instruction with a fast path for small integers
;; (docs/ARCHITECTURE.md, "Fused pairs"). Every other case takes the
;; general path and must give the same answers.
(define (classify n)                    ; slot and constant
  (if (< n 2) 'small 'large))
(write (map classify (list 1 2 1.5 2.5 -100000000000000000000 100000000000000000000 1/2)))
(newline)
(define (before? a b)                   ; two slots
  (if (< a b) 'yes 'no))
(write (list (before? 1 2) (before? 2 1) (before? 1.5 2) (before? 3 2.5)
             (before? 1 100000000000000000000)))
(newline)
(define (kind x)                        ; unary on a slot
  (if (null? x) 'empty (if (pair? x) 'pair (if (zero? x) 'zero 'other))))
(write (map kind (list '() '(1) 0 0.0 5 -0.0)))
(newline)
(define (first-is-one? l)               ; unary and binary on the accumulator
  (if (eq? (car l) 1) (if (not (= (cadr l) 2)) 'one-not-two 'one-two) 'other))
(write (map first-is-one? '((1 2) (1 3) (2 2))))
(newline)
(define (count-down n acc)              ; argument (- n 1), local returned
  (if (= n 0) acc (count-down (- n 1) (+ acc 1))))
(write (list (count-down 10 0) (count-down 10.0 0) (count-down 5/1 0)))
(newline)
(define (dec n) (list (- n 1) (+ n 1))) ; overflow past the fixnums
(write (dec 4611686018427387904))
(write (dec -9223372036854775808))
(write (dec 9223372036854775807))
(newline)
(define (test-of-an-if a b)             ; the test an `if` itself
  (if (if a (< b 1) (> b 1)) 'then 'else))
(write (list (test-of-an-if #t 0) (test-of-an-if #t 2) (test-of-an-if #f 0)
             (test-of-an-if #f 2)))
(newline)
(define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))
(write (list (fib 20) (fib 10.0)))
(newline)
(write (guard (e ((error-object? e) (error-object-message e))) (classify "2")))
(newline)
(write (guard (e ((error-object? e) (error-object-message e))) (count-down 'x 0)))
(newline)
;; The program's own `<` and `-`, in code compiled before and after.
(define (< a b) (> a b))
(define (- a b) (+ a b))
(write (list (classify 1) (classify 3) (before? 1 2) (dec 5)))
(newline)
(define (later n) (if (< n 2) (list n (- n 1)) 'no))
(write (list (later 1) (later 3)))
(newline)
