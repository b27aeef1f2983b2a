(import (scheme base) (scheme ideque))
(define q (ideque-remove-front (ideque 1)))
(ideque-front q)
