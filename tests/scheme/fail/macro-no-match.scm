(define-syntax m (syntax-rules () ((_ a) a)))
(m 1 2)
