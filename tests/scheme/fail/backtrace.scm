(define (inner x) (car x))
(define (middle x) (+ 1 (inner x)))
(define (outer x) (* 2 (middle x)))
(outer 'oops)
