;; A macro use may be a dotted list, which a pattern with a tail matches
;; (R7RS 4.3.2), in an expression, at top level and in a body.
(define-syntax parts (syntax-rules () ((_ a b ... . c) '(a (b ...) c))))
(write (list (parts 1 2 3 . 4) (parts 1 2 3) (parts 1))) (newline)
(define-syntax define-quoted (syntax-rules () ((_ name . val) (define name 'val))))
(define-quoted x . 5)
(write x) (newline)
(write (let () (define-quoted y . (6 7)) y)) (newline)
(define-syntax my-begin (syntax-rules () ((_ . forms) (begin . forms))))
(my-begin (define b 2) (define c 3))
(write (list b c)) (newline)
;; any other dotted form is still an error
(write (guard (e (#t (error-object-message e)))
  (eval '(+ 1 . 2) (environment '(scheme base)))))
(newline)
