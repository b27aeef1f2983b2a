; Creating, updating and deleting: results, and the errors for what does
; not exist.
(define (show x) (write x) (newline))
(show (arb:create
  "(define (factorial n) (if (<= n 1) 1 (* n (factorial (- n 1)))))"
  '()
  "计算阶乘的递归函数"
  "function"
  '("factorial" "fact")))
(show (arb:update 256
  '(("description" . "优化后的阶乘")
    ("code" . "(define (factorial n) (let loop ((i n) (acc 1)) (if (<= i 1) acc (loop (- i 1) (* acc i)))))"))))
(show (cdr (assoc "description" (arb:get-metadata 256))))
(show (factorial 20))
(show (arb:delete 256))
(show (arb:delete 99999))
(show (arb:get-metadata 256))
(show (arb:create "(define x 1)"))
(show (arb:get-metadata 257))
