;; A read-only script tries every way to write: each is refused, and the
;; store is left byte for byte as it was.
;; tier: read-only
;; output: permission-denied
;; value: 144
;; within: 10s
(for-each (lambda (thunk) (write (thunk)) (newline))
  (list
    (lambda () (arb:create "(define (x) 1)" '() "x" "function" '("x")))
    (lambda () (arb:update 256 '(("code" . "(define (seeded-square x) 0)"))))
    (lambda () (arb:delete 256))
    (lambda () (arb:switch-version 1))
    (lambda () (arb:transaction (arb:delete 256)))
    (lambda () (arb:eval '(arb:delete 256)))
    (lambda () (arb:eval-readonly '(arb:delete 256)))
    (lambda () (%arb:eval-at-tier 0 '(arb:switch-version 1)))))
(seeded-square 12)
