;; An error whose irritants are a shared structure 120 levels deep and a
;; cyclic list, and a record that holds itself: messages show a bounded
;; prefix of a value, and write labels the record's cycle.
;; error: runtime-error
;; message: bad thing: ((((((
;; output: #0=#<node #0#>
;; within: 5s
(define-record-type node (make-node x) node? (x node-x set-node-x!))
(define n (make-node 1))
(set-node-x! n n)
(write n)
(newline)
(define c (list 1 2 3))
(set-cdr! (cddr c) c)
(error "bad thing:" (let loop ((i 0) (v 'x)) (if (< i 120) (loop (+ i 1) (cons v v)) v)) c)
