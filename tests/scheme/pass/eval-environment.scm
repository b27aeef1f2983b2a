;; eval with environment.
(write (eval '(* 7 3) (environment '(scheme base)))) (newline)
(eval '(define evaluated 5) (interaction-environment))
(write evaluated) (newline)
(write (eval (list '+ 1 2))) (newline)
(write (let ((f (eval '(lambda (x) (* x x)) (scheme-report-environment 5)))) (f 9))) (newline)
