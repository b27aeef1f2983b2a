;; Captures a continuation at every level of a deepening recursion and keeps
;; them all: each capture copies a longer stack, so memory grows as the
;; square of the depth.
;; error: memory-limit
;; within: 30s
(define ks '())
(define (dive n)
  (+ 1 (call/cc (lambda (k) (set! ks (cons k ks)) (dive (+ n 1))))))
(dive 0)
