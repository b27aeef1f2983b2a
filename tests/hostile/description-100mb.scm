;; A 100 MB description and search query: the embedder and the symbol
;; search get text far larger than any real one.
;; error: memory-limit
;; within: 30s
(define big (make-string 100000000 #\a))
(arb:semantic-search big)
