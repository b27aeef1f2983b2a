;; chibi-scheme: bench/programs/ack.scm with the imports a chibi program needs
(import (scheme base) (scheme write) (scheme time))
;; Ackermann's function: deep non-tail recursion (A(2, n) nests about 2n
;; calls), the call sequence and small-integer arithmetic.
(define (ack m n)
  (cond ((= m 0) (+ n 1))
        ((= n 0) (ack (- m 1) 1))
        (else (ack (- m 1) (ack m (- n 1))))))
(display (let loop ((i 0) (r 0)) (if (= i 5) r (loop (+ i 1) (ack 3 7))))) (newline)
