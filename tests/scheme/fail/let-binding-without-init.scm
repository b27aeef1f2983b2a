(define (f)
  (let ((x 1)
        (y))
    (+ x y)))
