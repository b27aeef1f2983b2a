;; Non-tail recursion ten million deep: the VM's stacks grow, not the heap.
;; error: memory-limit
;; within: 20s
(define (count n) (if (= n 0) 0 (+ 1 (count (- n 1)))))
(count 10000000)
