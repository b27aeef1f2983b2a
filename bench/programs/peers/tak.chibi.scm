;; chibi-scheme: bench/programs/tak.scm with the imports a chibi program needs
(import (scheme base) (scheme write) (scheme time))
(define (tak x y z) (if (not (< y x)) z (tak (tak (- x 1) y z) (tak (- y 1) z x) (tak (- z 1) x y))))
(display (let loop ((i 0) (r 0)) (if (= i 20) r (loop (+ i 1) (tak 18 12 6))))) (newline)
