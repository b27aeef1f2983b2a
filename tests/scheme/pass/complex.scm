;; Complex numbers (R7RS 6.2, (scheme complex)): the reader's rectangular
;; and polar forms, the predicates, exact and inexact arithmetic, and the
;; functions whose argument or result is not real.
(import (scheme base) (scheme complex) (scheme inexact) (scheme write))
(define (show . xs) (for-each (lambda (x) (write x) (display " ")) xs) (newline))
(define (approx z) ; round parts to 6 decimals for stable output
  (define (r x) (if (exact? x) x (/ (round (* x 1e6)) 1e6)))
  (if (real? z) (r z) (make-rectangular (r (real-part z)) (r (imag-part z)))))
;; reading and writing
(show 1+2i 1-2i -1+2i +i -i 0+i +2i -2i 1/2+3/4i 1.0+2i 1+2.0i 1e2+1.0i 1s2+1.0i #d10+11i #x10+11i)
(show +inf.0+inf.0i -inf.0-inf.0i 3+0i 3.0+0i (approx 1@2) 2@0 -2.5i #e1.5+2.5i #i1+i)
(show (string->number "1+2i") (string->number "+i") (string->number "i") (string->number "1+2") (string->number "12i" 16))
(show (number->string 3-4i) (number->string 1/2+i 2) (symbol? 'a+i) (symbol? '-i+))
;; the predicates of R7RS 6.2.6
(show (complex? 3+4i) (complex? 3) (real? 3) (real? -2.5+0i) (real? -2.5+0.0i) (integer? 3+0i))
(show (rational? 1+2i) (integer? 1+2i) (exact? 1+2i) (inexact? 1.0+2i) (exact-integer? 1+2i))
(show (finite? 3.0+inf.0i) (infinite? 3.0+inf.0i) (nan? 1+2i) (nan? +nan.0+1.0i) (zero? 0.0+0.0i) (zero? 0+i))
(show (number? 1+2i) (eqv? 1+2i 1+2i) (eqv? 1+2i 1.0+2.0i) (equal? '(1+2i) (list (make-rectangular 1 2))))
;; arithmetic: exact stays exact
(show (+ 1+2i 3-4i) (- 1+2i 1+2i) (* 1+2i 3+4i) (/ 1+2i 3+4i) (/ -5+10i 3+4i) (* +i +i) (- +i) (/ +i))
(show (+ 1+2i 0.5) (* 2.0 1+i) (= 1 1.0 1.0+0.0i) (= 1.0 1.0+1.0i) (= 1+2i 1+2i 1+2i))
(let ((f (lambda (a b) (+ a b)))) (show (f 1+i 2) (f 1 +i) (- 3+3i 3) (* 2 +i)))
(show (expt +i 2) (expt 1+i 4) (expt 1+i -2) (square 1+i) (expt 0 +i) (expt 2 0))
;; accessors and constructors
(show (real-part 1+2i) (imag-part 1+2i) (real-part 5) (imag-part 5) (imag-part 5.0))
(show (make-rectangular 1 2) (make-rectangular 1.5 2) (make-rectangular 3 0) (make-rectangular 3 0.0))
(show (magnitude 3+4i) (magnitude -5) (magnitude 1+i) (angle 1+2i) (angle -1) (angle 1) (angle -1.0))
(show (approx (make-polar 1 1)) (make-polar 2 0) (approx (make-polar 2 3.141592653589793)))
(show (exact 1.0+2.5i) (inexact 1/2+3i) (exact->inexact +i) (inexact->exact 2.0-1.0i))
;; functions of negatives and complexes: principal values
(show (sqrt -1) (sqrt -4) (sqrt -1/4) (approx (sqrt -2)) (sqrt -4.0) (approx (sqrt +2i)) (approx (sqrt 3+4i)))
(show (approx (log -1)) (approx (log +i)) (approx (exp +3.141592653589793i)) (approx (log 100 10)) (approx (log -100 10)))
(show (approx (asin 2)) (approx (acos 2)) (approx (atan +2i)) (approx (sin +i)) (approx (cos 1+i)) (approx (tan 1+i)))
(show (approx (expt -1 1/2)) (approx (expt -8 1/3)) (approx (expt 2 +i)) (approx (expt +i +i)))
(show (exp 0) (sqrt 16) (sqrt 2.25) (log 1) (asin 0) (expt 2 10) (expt 4 1/2))
;; errors name the procedure
(for-each
 (lambda (thunk)
   (show (guard (e ((error-object? e) (error-object-message e))) (thunk))))
 (list (lambda () (< 1+i 2)) (lambda () (/ 1+i 0)) (lambda () (abs 1+i))
       (lambda () (make-rectangular 1+i 2)) (lambda () (real-part 'x)) (lambda () (max 1 +i))))
