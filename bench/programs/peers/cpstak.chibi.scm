;; chibi-scheme: bench/programs/cpstak.scm with the imports a chibi program needs
(import (scheme base) (scheme write) (scheme time))
(define (cpstak x y z)
  (define (tak x y z k)
    (if (not (< y x))
        (k z)
        (tak (- x 1) y z
             (lambda (v1)
               (tak (- y 1) z x
                    (lambda (v2)
                      (tak (- z 1) x y
                           (lambda (v3) (tak v1 v2 v3 k)))))))))
  (tak x y z (lambda (a) a)))
(display (let loop ((i 0) (r 0)) (if (= i 10) r (loop (+ i 1) (cpstak 18 12 6))))) (newline)
