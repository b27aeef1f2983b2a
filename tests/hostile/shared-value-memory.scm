;; The same shared structure as shared-value-timeout with no timeout: the
;; text of the value may not outgrow the memory cap, so printing it stops
;; at the cap, not at the end of the world.
;; options: --memory 64M
;; error: memory-limit
;; within: 10s
(let loop ((i 0) (v 'x))
  (if (< i 120) (loop (+ i 1) (cons v v)) v))
