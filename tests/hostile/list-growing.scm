;; A list that grows forever, one pair at a time.
;; error: memory-limit
;; within: 30s
(let loop ((l '())) (loop (cons 1 l)))
