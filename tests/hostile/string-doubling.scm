;; A string that doubles until it reaches the memory cap: each step builds a
;; string twice the size of the last, so the host pays for the new string
;; while the old one is still alive.
;; error: memory-limit
;; within: 20s
(let loop ((s "x")) (loop (string-append s s)))
