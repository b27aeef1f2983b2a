(import (scheme base) (scheme write) (only (scheme char) char-upcase) (scheme lazy))
(write (char-upcase #\a)) (newline)
(cond-expand (r7rs (display "r7rs")) (else (display "other"))) (newline)
(cond-expand ((and (not foo) (library (scheme base))) (display "yes")) (else (display "no"))) (newline)
