;; read-line (R7RS 6.13.2): "an end of line consists of either a
;; linefeed character, a carriage return character, or a sequence of a
;; carriage return character followed by a linefeed character"; the
;; string returned holds the text up to, not including, that end.
(define (lines text)
  (let ((port (open-input-string text)))
    (let loop ((acc '()))
      (let ((line (read-line port)))
        (if (eof-object? line)
            (reverse acc)
            (loop (cons line acc)))))))
(write (lines "a\nb\n")) (newline)
(write (lines "a\r\nb\r\n")) (newline)
(write (lines "a\rb\rc")) (newline)
(write (lines "a\r\rb\n\r\nc\r")) (newline)
(write (lines "\r\n")) (newline)
;; What follows a line is left for the next read.
(define port (open-input-string "one\r\ntwo"))
(write (list (read-line port) (read-char port) (read-line port) (eof-object? (read-line port))))
(newline)
