(import (scheme base) (scheme ilist))
(define (head l) (icar l))
(head (list 1 2))
