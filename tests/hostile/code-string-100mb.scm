;; A 100 MB code string handed to the arb: procedures that take code: each
;; fails within the memory cap, and the session goes on.
;; error: memory-limit
;; within: 30s
(define big (string-append "(define big-constant \"" (make-string 100000000 #\a) "\")"))
(arb:create big '() "a very large constant" "constant" '("big-constant"))
