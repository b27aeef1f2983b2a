;; R7RS 5.5: the type name and the constructor are separate bindings; a
;; constructor (or predicate, or accessor) named like the type takes the
;; name, and the other procedures keep working, as in chibi.
(import (scheme base) (scheme write))
(define (show . xs) (for-each (lambda (x) (write x) (display " ")) xs) (newline))
(define-record-type point (point x y) point? (x point-x set-point-x!) (y point-y))
(define p (point 1 2))
(set-point-x! p 10)
(show (point? p) (point-x p) (point-y p) (point? 5))
;; a bare constructor name, the same as the type
(define-record-type pair3 pair3 pair3? (a pair3-a) (b pair3-b) (c pair3-c))
(show (pair3-c (pair3 1 2 3)))
;; the type name rebound afterwards does not break the procedures
(define-record-type node (make-node v) node? (v node-v))
(define node 'rebound)
(show node (node-v (make-node 7)) (node? (make-node 7)))
;; inside a body
(define (local)
  (define-record-type cell (cell v) cell? (v cell-v))
  (list (cell-v (cell 'inside)) (cell? (cell 1)) (procedure? cell)))
(show (local))
;; a record type a macro makes, whose names the macro introduces
(define-syntax make-box-type
  (syntax-rules ()
    ((_ make get) (begin (define-record-type box (make v) box? (v get))))))
(make-box-type box-a box-a-ref)
(make-box-type box-b box-b-ref)
(show (box-a-ref (box-a 1)) (box-b-ref (box-b 2)))
