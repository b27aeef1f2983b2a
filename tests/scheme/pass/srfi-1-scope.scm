;; A bundled library's names reach only programs that import them, and
;; only the names the import set brings in; the library's own procedures
;; are not disturbed by a program's definitions of the same names.
(import (scheme base) (scheme write))
(define (attempt thunk)
  (guard (e ((error-object? e) (error-object-message e)))
    (thunk)))
(write (attempt (lambda () (fold + 0 '(1 2))))) (newline)
(write (cond-expand (srfi-1 'srfi-1) (else 'none))) (newline)
(import (only (srfi 1) every any))
(write (every odd? '(1 3))) (newline)
(write (attempt (lambda () (first '(1 2))))) (newline)
;; the program's own `any` does not change what `every` of (scheme list),
;; nor what the library's other procedures, call
(define (any . args) 'mine)
(write (any odd? '(1))) (newline)
(import (prefix (scheme list) l:))
(write (l:lset-adjoin eq? '(a b) 'c 'a)) (newline)
(write (l:any odd? '(2 3))) (newline)
;; a library of the program's own can import it too
(define-library (stats)
  (export total)
  (import (scheme base) (only (srfi 1) fold))
  (begin (define (total l) (fold + 0 l))))
(import (stats))
(write (total '(1 2 3))) (newline)
;; both names are one library
(import (rename (srfi 1) (iota range)))
(write (range 3)) (newline)
