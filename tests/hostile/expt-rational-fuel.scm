;; The same long primitive under a small step budget: a primitive charges
;; steps for its work, so the budget stops it.
;; options: --fuel 1000000
;; error: step-limit
;; within: 2s
(begin (expt -7/2 1114111) 1)
