(import (scheme base) (srfi 69))
(define (lookup t k) (hash-table-ref/default t k 0))
(lookup '((a . 1)) 'a)
