(import (scheme base) (scheme hash-table))
(define t (make-hash-table eq?))
(hash-table-ref t 'nope)
