(import (scheme base) (srfi 1))
(define (sum l) (fold + 0 l))
(sum '(1 2 . 3))
