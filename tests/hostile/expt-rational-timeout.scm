;; One primitive call with seconds of bignum work (two powers of about
;; 16 and 28 million bits; `(expt -7/2 1114111)`, once 24 s, now takes
;; well under the second): the timeout must stop it inside the primitive.
;; options: --timeout 1
;; error: interrupted
;; within: 1.1s
(begin (expt -7/3 10000000) 1)
