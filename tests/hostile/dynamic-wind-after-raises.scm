;; Exceptions raised from dynamic-wind after-thunks while unwinding, and an
;; after-thunk that re-enters its own body forever.
;; options: --fuel 1000000
;; output: (outer-caught after)
;; error: step-limit
;; within: 10s
(guard (e2 (#t (display (list 'outer-caught e2)) (newline)))
  (guard (e (#t (display (list 'caught e)) (newline)))
    (dynamic-wind (lambda () #f) (lambda () (raise 'inner)) (lambda () (raise 'after)))))
(let ((k #f))
  (dynamic-wind
    (lambda () #f)
    (lambda () (call/cc (lambda (c) (set! k c))))
    (lambda () (k 1))))
