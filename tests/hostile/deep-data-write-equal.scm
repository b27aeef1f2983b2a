;; Data nested a million levels deep (in the car), built at run time, then
;; compared with equal? and written out.
;; value: 2000002
;; within: 20s
(define (nest n) (let loop ((i 0) (d '())) (if (= i n) d (loop (+ i 1) (list d)))))
(define a (nest 1000000))
(define b (nest 1000000))
(equal? a b)
(string-length (let ((p (open-output-string))) (write a p) (get-output-string p)))
