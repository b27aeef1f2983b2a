;; define-library registers a library; import of it then works.
(define-library (stack utils)
  (export make-stack push! (rename stack-top top))
  (import (scheme base))
  (begin
    (define (make-stack) (list 'stack))
    (define (push! s x) (set-cdr! s (cons x (cdr s))))
    (define (stack-top s) (cadr s))))
(import (stack utils))
(define s (make-stack))
(push! s 1)
(push! s 2)
(write (top s)) (newline)
(write (guard (e (#t (error-object-message e))) (eval '(import (no such library))))) (newline)
