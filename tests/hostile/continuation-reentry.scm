;; Re-enters a captured continuation forever while growing a list kept in an
;; assigned variable (a box, so re-entering does not bring back its old value).
;; error: memory-limit
;; within: 30s
(define acc '())
(let ((k (call/cc (lambda (c) c))))
  (set! acc (cons (make-vector 64 acc) acc))
  (k k))
