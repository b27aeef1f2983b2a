;; chibi-scheme: bench/programs/ctak.scm with the imports a chibi program needs
(import (scheme base) (scheme write) (scheme time))
(define (ctak x y z)
  (call-with-current-continuation (lambda (k) (ctak-aux k x y z))))
(define (ctak-aux k x y z)
  (if (not (< y x))
      (k z)
      (call-with-current-continuation
       (lambda (k)
         (ctak-aux k
          (call-with-current-continuation (lambda (k) (ctak-aux k (- x 1) y z)))
          (call-with-current-continuation (lambda (k) (ctak-aux k (- y 1) z x)))
          (call-with-current-continuation (lambda (k) (ctak-aux k (- z 1) x y))))))))
(display (ctak 18 12 6)) (newline)
