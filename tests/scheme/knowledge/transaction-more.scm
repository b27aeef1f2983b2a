; Transactions: reads inside see the changes; an error, a raise or leaving
; by a continuation rolls everything back; inner transactions are savepoints.
(define (show x) (write x) (newline))
(define (kind r) (and (arb:error? r) (cdr (assoc "error" r))))
(define v0 (arb:current-version))
(show (arb:transaction
  (arb:create "(define (tw x) (* 2 x))" '() "twice" "function" '("tw"))
  (list (length (arb:search-by-symbol "tw" "exact"))
        (tw 21)
        (cdr (assoc "description" (arb:get-metadata 256))))))
(show (- (arb:current-version) v0))
(define v1 (arb:current-version))
; a raised error
(show (arb:transaction
  (arb:create "(define a 1)" '() "a" "constant" '("a"))
  (car '())))
; a returned error alist
(show (kind (arb:transaction (arb:delete 99999))))
; an escape by continuation
(show (call/cc (lambda (k)
  (arb:transaction
    (arb:create "(define b 2)" '() "b" "constant" '("b"))
    (k 'escaped)))))
(show (= v1 (arb:current-version)))
(show (arb:search-by-symbol "a" "exact"))
(show (arb:search-by-symbol "b" "exact"))
; nested: the failed inner one is undone, the outer one commits
(show (arb:transaction
  (arb:create "(define c 3)" '() "c" "constant" '("c"))
  (let ((inner (arb:transaction
                 (arb:create "(define d 4)" '() "d" "constant" '("d"))
                 (arb:delete 99999))))
    (kind inner))))
(show (map (lambda (n) (length (arb:search-by-symbol n "exact"))) '("c" "d")))
(show (- (arb:current-version) v1))
; an empty transaction is still one version
(show (cdr (assoc "new-version-id" (arb:transaction))))
(show (arb:version-info (arb:current-version)))
; switching inside a transaction is refused and rolls it back
(show (kind (arb:transaction (arb:switch-version 1))))
