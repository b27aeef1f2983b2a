;; chibi-scheme: bench/programs/bignum.scm with the imports a chibi program needs
(import (scheme base) (scheme write) (scheme time))
(define (fact n) (if (= n 0) 1 (* n (fact (- n 1)))))
(define (digits n) (string-length (number->string n)))
(display (let loop ((i 0) (s 0)) (if (= i 20) s (loop (+ i 1) (+ s (digits (fact 1000))))))) (newline)
