;; chibi-scheme: bench/programs/closures.scm with the imports a chibi program needs
(import (scheme base) (scheme write) (scheme time))
(define (make-adder n) (lambda (x) (+ x n)))
(define (compose f g) (lambda (x) (f (g x))))
(define (run k)
  (let loop ((i 0) (acc 0))
    (if (= i k) acc
        (loop (+ i 1) ((compose (make-adder i) (make-adder 1)) acc)))))
(display (run 1000000)) (newline)
