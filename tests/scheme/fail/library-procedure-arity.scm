(import (scheme base) (srfi 13))
(define (first-b s) (+ 1 (string-index s)))
(first-b "abc")
