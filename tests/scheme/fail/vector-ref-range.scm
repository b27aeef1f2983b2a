(define v (vector 1 2 3))
(vector-ref v 99)
