;; Handlers that raise: to the outer handler, in a loop, and a handler that
;; installs a new handler and raises again, deeper each time.
;; output: (outer inner)
;; error: memory-limit
;; within: 30s
(display (with-exception-handler
  (lambda (e) (list 'outer e))
  (lambda ()
    (with-exception-handler
      (lambda (e) (raise-continuable e))
      (lambda () (raise-continuable 'inner))))))
(newline)
(define (again) (with-exception-handler (lambda (e) (again)) (lambda () (raise 'x))))
(again)
