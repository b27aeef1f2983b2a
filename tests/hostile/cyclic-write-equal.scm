;; Cyclic structures: write labels the cycle, equal? terminates.
;; value: #t
;; within: 5s
(define c (list 1 2 3))
(set-cdr! (cddr c) c)
(define d (list 1 2 3 1 2 3))
(set-cdr! (cdr (cddr (cddr d))) d)
(define v (vector 1 2))
(vector-set! v 0 v)
(write c)
(newline)
(write v)
(newline)
(equal? c d)
