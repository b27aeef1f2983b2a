;; define-library: exports (also renamed) are visible, private definitions
;; are not and do not disturb the program's own names; macros export too.
(define helper 'the-programs-own-helper)
(define-library (stack utils)
  (export make-stack push! (rename stack-top top) with-pushed)
  (import (scheme base))
  (begin
    (define (helper s) (cdr s))
    (define (make-stack) (list 'stack))
    (define (push! s x) (set-cdr! s (cons x (helper s))))
    (define (stack-top s) (car (helper s)))
    (define-syntax with-pushed
      (syntax-rules () ((_ s x body ...) (begin (push! s x) body ...))))))
(import (stack utils))
(define s (make-stack))
(push! s 1)
(with-pushed s 2 (write (top s)))
(newline)
(write helper) (newline)
(write (guard (e (#t (error-object-message e))) stack-top)) (newline)
(write (guard (e (#t (error-object-message e))) (eval '(import (no such library))))) (newline)
