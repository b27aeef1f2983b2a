;; Patterns built to blow up a backtracking or automaton-building matcher,
;; run against many long symbol names. Each is refused or answered quickly.
;; options: --timeout 10
;; output: invalid-pattern
;; value: done
;; within: 10s
(arb:transaction
  (let loop ((i 0))
    (if (< i 300)
        (begin
          (arb:create (string-append "(define " (make-string 100 #\a) (number->string i) " 1)")
                      '() "a long name" "constant"
                      (list (string-append (make-string 100 #\a) (number->string i))))
          (loop (+ i 1))))))
(define patterns
  '("(a*)*b" "(a|aa)*b" "(a|a?)+b" "^(a+)+$" "a{1000}{1000}" "((((a*)*)*)*)*c"
    "(?:a?){100}a{100}" "[a-z]{1,1000}[a-z]{1,1000}[a-z]{1,1000}z" "(.*){1000}x"
    "\\w{1,100}\\w{1,100}\\w{1,100}\\d{5}"))
(for-each (lambda (p) (write (arb:search-by-symbol p "regex" 10)) (newline)) patterns)
(for-each (lambda (p) (write (arb:search-by-symbol p "wildcard" 10)) (newline))
          (list (string-append (make-string 500 #\*) "b") "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b"))
(write (arb:search-by-symbol (make-string 128 #\a) "fuzzy" 10))
(newline)
'done
