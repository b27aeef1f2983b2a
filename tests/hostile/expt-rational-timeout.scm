;; One primitive call whose work is quadratic in the exponent (minutes of
;; bignum multiplication): the timeout must stop it inside the primitive.
;; options: --timeout 1
;; error: interrupted
;; within: 1.1s
(begin (expt -7/2 1114111) 1)
