;; R7RS 6.12: (environment list1 ...) is the environment of the import
;; sets, nothing more; its bindings and itself are immutable.
(import (scheme base) (scheme eval) (scheme write))
(define (try thunk)
  (guard (e ((error-object? e) (list 'error (error-object-message e))))
    (thunk)))
(define-syntax show
  (syntax-rules () ((_ e) (begin (write (try (lambda () e))) (newline)))))
;; the standard's example
(show (eval '(* 7 3) (environment '(scheme base))))
;; prefix: every name renamed, quote and define included
(show (eval '(b:car (b:quote (1 2))) (environment '(prefix (scheme base) b:))))
(show (eval '(b:car '(1 2)) (environment '(prefix (scheme base) b:))))
;; only, except, rename, nested
(show (eval '(car '(1 2)) (environment '(only (scheme base) car quote))))
(show (eval '(vector-map + #(1)) (environment '(only (scheme base) car quote))))
(show (eval '(first (quote (1 2))) (environment '(rename (only (scheme base) car quote) (car first)))))
(show (eval '(car '(1)) (environment '(except (scheme base) car))))
(show (eval '(p:first '(1 2)) (environment '(scheme base) '(prefix (only (scheme list) first) p:))))
;; several sets together; a bundled library runs when first needed
(show (eval '(fold + 0 (iota 4)) (environment '(scheme base) '(srfi 1))))
(show (eval '(stream-car (stream-cdr (stream 1 2))) (environment '(scheme base) '(scheme stream))))
;; the session's definitions are not there
(define secret 42)
(show (eval 'secret (environment '(scheme base))))
(show (eval 'secret (interaction-environment)))
;; immutable: no definition, no assignment of its bindings; local
;; variables are the code's own
(show (eval '(define x 1) (environment '(scheme base))))
(show (eval '(set! car cdr) (environment '(scheme base))))
(show (eval '(let ((x 1)) (set! x 2) (define (f) x) (f)) (environment '(scheme base))))
(show (car '(still-car)))
;; macros of the standard and local macros keep their meaning
(show (eval '(guard (e (#t (list 'caught e))) (raise 'oops)) (environment '(scheme base))))
(show (eval '(let-syntax ((first (syntax-rules () ((_ l) (car l))))) (first '(9 8)))
            (environment '(scheme base))))
(show (eval '(let-syntax ((m (syntax-rules () ((_ v) (vector-ref v 0))))) (m #(1)))
            (environment '(only (scheme base) let-syntax syntax-rules))))
;; bad import sets and bad environments
(show (environment '(scheme nothing)))
(show (environment '(only (scheme base) frobnicate)))
(show (environment '(scheme base) '(rename (scheme base) (cdr car))))
(show (eval 1 'not-an-environment))
(show (eval 1 (environment)))
(show (eval '(car '(1)) (environment)))
;; an environment is a value like any other
(define env (environment '(only (scheme base) + quote)))
(show (map (lambda (e) (eval e env)) '((+ 1 2) (+ 3 4))))
(show env)
