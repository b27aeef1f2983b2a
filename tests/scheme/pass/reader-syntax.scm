;; Lexical syntax: comments, datum labels, characters, escapes, |symbols|, fold-case.
#| a block comment #| nested |# still comment |#
(write (list 1 #;(ignored datum) 2)) (newline)
(write '(#t #true #f #false)) (newline)
(write '|two words|) (newline)
(write (symbol->string '|a\|b|)) (newline)
(write "line one\
        continued") (newline)
(write (list #\x41 #\alarm #\delete #\escape #\x3bb)) (newline)
(write '#(1 #(2))) (newline)
(write '#u8(0 255)) (newline)
(write (let ((x '#1=(a . #1#))) (eq? x (cdr x)))) (newline)
#!fold-case
(write 'HELLO) (newline)
#!no-fold-case
(write 'HELLO) (newline)
(write (quote #e1.25)) (newline)
