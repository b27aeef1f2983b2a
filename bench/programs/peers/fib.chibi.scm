;; chibi-scheme: bench/programs/fib.scm with the imports a chibi program needs
(import (scheme base) (scheme write) (scheme time))
(define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))
(display (fib 30)) (newline)
