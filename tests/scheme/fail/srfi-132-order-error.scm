(import (scheme base) (scheme sort))
(define (by-size l) (list-sort < l))
(by-size '(3 "x" 1))
