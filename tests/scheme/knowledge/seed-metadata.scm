; Metadata, dependencies in both directions, and closures.
(define (show x) (write x) (newline))
(arb:create "(define (multiplication a b) (* a b))" '() "乘法" "function" '("multiplication"))
(arb:create "(define (factorial n) (if (<= n 1) 1 (multiplication n (factorial (- n 1)))))"
            '((256 . "multiplication")) "计算阶乘的递归函数" "function" '("factorial" "fact"))
(show (arb:get-metadata 257))
(show (arb:get-metadata 1))
(show (arb:get-dependencies 257))
(show (arb:get-dependencies 256))
(show (arb:get-dependents 256))
(show (arb:get-dependents 257))
(display (arb:closure '(257)))
(show (arb:get-metadata 99999))
(show (arb:get-dependencies 99999))
