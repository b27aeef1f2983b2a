; arb:transaction: all of it is one version, or nothing is.
(define (show x) (write x) (newline))
(arb:create "(define base 0)" '() "base" "constant" '("base"))
(define before (arb:current-version))
(show (arb:transaction
  (arb:create "(define (add x y) (+ x y))" '() "加法函数" "function" '("add"))
  (arb:create "(define (sub x y) (- x y))" '() "减法函数" "function" '("sub"))
  (arb:update 256 '(("dependencies" . (257 258))))))
(show (arb:version-chain (arb:current-version)))
(show (arb:version-info (arb:current-version)))
(show (list (add 1 2) (sub 5 3)))
(define before (arb:current-version))
(show (arb:transaction
  (arb:create "(define valid-func)" '() "有效函数" "function" '())
  (arb:create "invalid syntax(" '() "无效函数" "function" '())
  (arb:update 200 '(("code" . "new code")))))
(show (= before (arb:current-version)))
(show (arb:search-by-symbol "valid" "prefix"))
(show (length (arb:reflog)))
