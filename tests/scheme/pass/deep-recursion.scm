;; Non-tail recursion a million deep runs on heap frames, not the Rust stack.
(define (count n) (if (= n 0) 0 (+ 1 (count (- n 1)))))
(display (count 1000000)) (newline)
(define (build n) (if (= n 0) '() (cons n (build (- n 1)))))
(display (length (build 500000))) (newline)
