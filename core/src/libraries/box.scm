;; (scheme box), also (srfi 111): boxes, one mutable cell each.
(define-library (scheme box)
  (export box box? unbox set-box!)
  (import (scheme base))
  (begin
    (define-record-type <box> (box value) box? (value %unbox %set-box!))

    (define (unbox b)
      (if (not (box? b)) (error "unbox: expected a box" b))
      (%unbox b))

    (define (set-box! b v)
      (if (not (box? b)) (error "set-box!: expected a box" b))
      (%set-box! b v))

    (define %loaded #t)))
