;; Import sets hide what they leave out (R7RS 5.2, 5.6.1): a name of a
;; library that no import brings in as it is cannot be used by the
;; program's own text, until an import brings it in or the program
;; defines it. Macros of the libraries keep working: what they expand to
;; is theirs, not the program's.
(import (scheme base) (scheme write))
(import (only (scheme inexact) sqrt))
(define (attempt thunk)
  (guard (e ((error-object? e) (error-object-message e)))
    (thunk)))
(write (sqrt 16)) (newline)
(write (attempt (lambda () (exp 0)))) (newline)
(import (except (scheme char) char-upcase))
(write (char-downcase #\A)) (newline)
(write (attempt (lambda () (char-upcase #\a)))) (newline)
(import (rename (scheme lazy) (force force!)))
(write (force! (delay 42))) (newline)
(write (attempt (lambda () (force (delay 1))))) (newline)
;; A later import brings a name back.
(import (only (scheme inexact) exp))
(write (exp 0)) (newline)
;; A definition makes a left-out name the program's own.
(define (char-upcase c) 'mine)
(write (char-upcase #\a)) (newline)
;; Names imported as they are stay visible, whatever a later prefix does.
(import (prefix (scheme base) b:))
(write (b:car (list 1 2))) (newline)
(write (car (list 1 2))) (newline)
;; Syntax too: a left-out keyword is not one.
(import (only (scheme case-lambda)))
(write (attempt (lambda () (case-lambda)))) (newline)
