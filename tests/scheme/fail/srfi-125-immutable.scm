(import (scheme base) (scheme hash-table) (scheme comparator))
(define t (hash-table (make-default-comparator) 'a 1))
(hash-table-set! t 'b 2)
