;; R7RS 4.3.2: an ellipsis listed among the literals is matched as a
;; literal; the rules then have no ellipsis.
(define-syntax ell
  (syntax-rules (...)
    ((_ ...) 'the-ellipsis)
    ((_ x) (list 'one x))))
(write (list (ell ...) (ell 5))) (newline)
;; with a custom ellipsis, ... is an ordinary identifier again
(define-syntax my-list
  (syntax-rules ::: ()
    ((_ x :::) (list 'got x :::))))
(write (my-list 1 2 3)) (newline)
;; a custom ellipsis listed as a literal is a literal too
(define-syntax lit
  (syntax-rules ::: (:::)
    ((_ a :::) (list a 'colons))
    ((_ a b) (list a b))))
(write (list (lit 1 :::) (lit 1 2))) (newline)
;; the ordinary ellipsis still repeats where it is not a literal
(define-syntax plain
  (syntax-rules ()
    ((_ x ...) (list x ...))))
(write (plain 1 2 3)) (newline)
