; Tiers are enforced by the running context: arb:eval is read-write,
; arb:eval-readonly read-only, and code cannot raise its own tier.
(define (show x) (write x) (newline))
(define (kind r) (and (arb:error? r) (cdr (assoc "error" r))))
(define (inner r) (cdr (assoc "result" r)))
(show (kind (inner (arb:eval '(arb:switch-version 1)))))
(show (kind (arb:eval-readonly '(arb:create "(define x 1)"))))
(show (kind (arb:eval-readonly '(arb:update 256 '(("description" . "x"))))))
(show (kind (arb:eval-readonly '(arb:delete 256))))
(show (kind (arb:eval-readonly '(arb:transaction (+ 1 2)))))
(show (kind (arb:eval-readonly '(arb:eval '(+ 1 2)))))
; nesting cannot climb back up
(show (kind (arb:eval-readonly '(%arb:eval-at-tier 0 '(arb:switch-version 1)))))
(show (kind (inner (arb:eval '(%arb:eval-at-tier 0 '(arb:switch-version 1))))))
; reads are allowed everywhere
(show (arb:eval-readonly '(arb:current-version)))
(show (length (arb:eval-readonly '(arb:search-by-symbol "arb:"))))
; the tier comes back after the inner evaluation, also after an error
(show (arb:eval-readonly '(car 5)))
(show (kind (arb:create "(define y 2)" '() "y" "constant" '("y"))))
(show (arb:switch-version 1))
; a continuation captured inside a read-only evaluation keeps its tier:
; re-entering it from outside does not give the inner code more
(show (let ((k #f) (n 0))
        (let ((r (arb:eval-readonly
                  '(call/cc (lambda (c) c)))))
          (set! n (+ n 1))
          (if (procedure? r)
              (r 'again)
              (list n r)))))
(show (kind (arb:create "(define z 3)")))
; nothing was created by the denied calls
(show (arb:version-chain (arb:current-version)))
