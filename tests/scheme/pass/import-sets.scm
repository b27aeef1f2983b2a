;; Import sets (R7RS 5.2): prefix and rename bring in new names for a
;; library's exports, syntax included; only and except check the names
;; they list; a definition of a renamed name makes it a global of its own.
;; The names the program uses as they are come from its first import
;; (what import sets leave out is hidden: import-hiding.scm).
(import (scheme base) (scheme write) (scheme char))
(import (prefix (scheme base) b:))
(write (b:car (b:list 1 2))) (newline)
(b:define b:x 5)
(write (b:if (b:> b:x 3) 'big 'small)) (newline)
(write (b:let ((y 2)) (b:* y 21))) (newline)
(import (rename (scheme char) (char-upcase up) (string-upcase shout)))
(write (list (up #\a) (shout "hi"))) (newline)
(import (prefix (only (scheme complex) real-part imag-part) z:))
(write (list (z:real-part 3+4i) (z:imag-part 3+4i))) (newline)
(import (rename (prefix (scheme cxr) c-) (c-caddr third)))
(write (list (third '(1 2 3)) (c-cadddr '(1 2 3 4)))) (newline)
(import (except (scheme write) write-shared))
;; a library's own import sets are seen inside it only
(define-library (stack)
  (export push top)
  (import (prefix (scheme base) s:))
  (begin
    (s:define items '())
    (s:define (push x) (s:set! items (s:cons x items)))
    (s:define (top) (s:car items))))
(import (rename (stack) (top peek)))
(push 1) (push 2)
(write (peek)) (newline)
(write (guard (e (#t (error-object-message e))) (eval 's:car (environment '(scheme base))))) (newline)
;; a definition of a renamed name is a new global; the original is untouched
(define up (lambda (c) 'mine))
(write (list (up #\a) (char-upcase #\a))) (newline)
;; names an import set lists must be there
(for-each
 (lambda (spec)
   (write (guard (e (#t (error-object-message e)))
            (eval (list 'import spec) (interaction-environment))))
   (newline))
 '((only (scheme base) car frobnicate) (except (scheme char) car) (rename (scheme base) (kar car))
   (prefix (scheme base)) (only (scheme nothing) x)))
