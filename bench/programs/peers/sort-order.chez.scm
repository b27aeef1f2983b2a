;; sort-order.scm for Chez Scheme (R6RS, no (scheme sort)): the same data
;; and output with Chez's own stable sorts (`list-sort`, `vector-sort`),
;; with an order of the program's.
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
(define (sorted-list? l)
  (or (null? l) (null? (cdr l))
      (and (not (< (cadr l) (car l))) (sorted-list? (cdr l)))))
(define result (run 1 #f))
(display (list (sorted-list? (car result)) (sorted-list? (vector->list (cadr result)))
               (car (car result)) (vector-ref (cadr result) (- n 1))))
(newline)
