(define (f x)
  (+ x undefined-thing))
(f 1)
