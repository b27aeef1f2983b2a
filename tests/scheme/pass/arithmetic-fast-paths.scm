;; Arithmetic that takes the engine's fast paths (all flonums, all
;; fixnums, a flonum beside a fixnum) gives what the general numeric
;; tower gives: the same values, exactness, overflow into bignums, and
;; errors.
(write (list (+ 1.5 2.5 3.0) (* 2.0 3.0 4.0) (- 10.0 1.5 2.5) (+ 0.5) (* 0.5))) (newline)
(write (list (+ 1 2 3) (* 2 3 4) (- 10 1 2) (+) (*) (- 7))) (newline)
(write (list (+ 4611686018427387904 4611686018427387904 1)
             (* 4294967296 4294967296 2)
             (- -4611686018427387904 4611686018427387904 1))) (newline)
(write (list (* 2.0 3 4.0) (+ 1 2 0.5) (+ 0.5 1 2) (- 1 0.5 0.25) (* 1/2 4.0 2))) (newline)
;; `+` and `*` fold from their first argument, as Guile and Chez do: a
;; sum of negative zeros is a negative zero.
(write (list (+ -0.0) (+ -0.0 -0.0) (+ -0.0 -0.0 -0.0) (* -0.0 1.0 1.0) (- 0.0 0.0 0.0))) (newline)
(write (list (+ -0.0 -0.0 1/2) (* -0.0) (+ 5) (* 1/3) (+ -0.0 0) (+ 0 -0.0) (+ -0.0 -0.0+1.0i))) (newline)
(write (list (+ 1.5 1) (+ 1 1.5) (- 1.5 1) (- 1 1.5) (* 1.5 2) (* 2 1.5))) (newline)
(write (list (< 1.0 2.0) (> 1.0 2.0) (<= 2.0 2.0) (>= 1.0 2.0) (= 0.0 -0.0)
             (< +nan.0 1.0) (> +nan.0 1.0) (= +nan.0 +nan.0) (>= +inf.0 1e308))) (newline)
(define (loop zr k)
  (if (> (* zr zr) 4.0) k (loop (+ (* 2.0 zr zr) 0.25) (+ k 1))))
(write (loop 0.0 0)) (newline)
(write (guard (e (#t (list (error-object-message e) (error-object-irritants e)))) (+ 1.0 2.0 'three))) (newline)
(write (guard (e (#t (list (error-object-message e) (error-object-irritants e)))) (* 2 3 "four"))) (newline)
(write (guard (e (#t (list (error-object-message e) (error-object-irritants e)))) (- 1.0 #t))) (newline)
