;; sort-order.scm for Guile, which has no (scheme sort): the same data and
;; output with Guile's own stable merge sort (`stable-sort`), with
;; an order of the program's.
(import (scheme base) (scheme write))
(define n 100000)
(define data
  (let loop ((i 0) (x 12345) (acc '()))
    (if (= i n) acc
        (let ((x (modulo (+ (* x 1103515245) 12345) 2147483648)))
          (loop (+ i 1) x (cons x acc))))))
(define v (list->vector data))
(define less (lambda (a b) (< a b)))
(define (run k last)
  (if (= k 0) last
      (run (- k 1) (list (stable-sort data less) (stable-sort v less)))))
(define result (run 1 #f))
(display (list (sorted? (car result) <) (sorted? (cadr result) <)
               (car (car result)) (vector-ref (cadr result) (- n 1))))
(newline)
