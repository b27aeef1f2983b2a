;; A deep recursion's backtrace folds repeated frames into one line.
(define (count n)
  (if (= n 0)
      (vector-ref (vector) 0)
      (+ 1 (count (- n 1)))))
(count 100000)
