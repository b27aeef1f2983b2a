(define-record-type point
  (make-point x y)
  point?
  (x point-x)
  (y))
