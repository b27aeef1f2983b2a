;; (scheme file) and (scheme process-context) with nothing granted (the
;; host's grants are tested by the arbores command's own tests), and the
;; current ports as parameters (R7RS 6.13.1).
(import (scheme base) (scheme write) (scheme file) (scheme load)
        (scheme process-context))

(define (outcome thunk)
  (guard (e ((file-error? e) 'file-error)
            ((error-object? e) (list 'other-error (error-object-message e))))
    (thunk)
    'allowed))

(define (show label x) (display label) (display ": ") (write x) (newline))

;; Every file operation is refused with a file error.
(show "open-input-file" (outcome (lambda () (open-input-file "in.txt"))))
(show "open-binary-input-file" (outcome (lambda () (open-binary-input-file "in.bin"))))
(show "open-output-file" (outcome (lambda () (open-output-file "out.txt"))))
(show "open-binary-output-file" (outcome (lambda () (open-binary-output-file "out.bin"))))
(show "call-with-input-file" (outcome (lambda () (call-with-input-file "in.txt" read))))
(show "call-with-output-file"
      (outcome (lambda () (call-with-output-file "out.txt" (lambda (p) (write 1 p))))))
(show "with-input-from-file" (outcome (lambda () (with-input-from-file "in.txt" read))))
(show "with-output-to-file"
      (outcome (lambda () (with-output-to-file "out.txt" (lambda () (display 1))))))
(show "file-exists?" (outcome (lambda () (file-exists? "in.txt"))))
(show "delete-file" (outcome (lambda () (delete-file "in.txt"))))
(show "load" (outcome (lambda () (load "lib.scm"))))
(show "wrong type" (outcome (lambda () (open-input-file 'in.txt))))

;; The command line is a list of strings; no variable is visible.
(show "command-line" (let ((c (command-line)))
                       (and (pair? c) (string? (car c)))))
(show "HOME" (get-environment-variable "HOME"))
(show "variables" (get-environment-variables))

;; The current ports are parameters.
(show "output port" (list (output-port? (current-output-port))
                          (textual-port? (current-output-port))
                          (input-port? (current-input-port))
                          (output-port? (current-error-port))))
(define captured (open-output-string))
(parameterize ((current-output-port captured))
  (display "into the string")
  (write-char #\!)
  (newline))
(show "captured" (get-output-string captured))
(show "read from a parameterized input"
      (parameterize ((current-input-port (open-input-string "(1 2) x\nline two")))
        (list (read) (read-char) (read) (read-line) (read-line) (read-line))))
(flush-output-port)
(flush-output-port (current-output-port))
(show "flush a string port" (outcome (lambda () (flush-output-port captured))))

;; An output string port is not a file: close it and it refuses writes.
(close-port captured)
(show "closed" (outcome (lambda () (display "x" captured))))
