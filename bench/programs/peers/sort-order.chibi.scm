;; chibi-scheme: bench/programs/sort-order.scm with (scheme time) imported for the timer.
;; (scheme sort): 100,000 pseudo-random fixnums sorted as a list and as a
;; vector, once each, with an order of the program's, called from Scheme.
(import (scheme base) (scheme write) (scheme sort) (scheme time))
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
      (run (- k 1) (list (list-sort less data) (vector-sort less v)))))
(define result (run 1 #f))
(display (list (list-sorted? < (car result)) (vector-sorted? < (cadr result))
               (car (car result)) (vector-ref (cadr result) (- n 1))))
(newline)
