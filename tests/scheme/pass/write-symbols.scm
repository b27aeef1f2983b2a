;; write puts a symbol in bars when it would otherwise read back as
;; something else (R7RS 2.1, 6.5) and escapes what bars need escaped;
;; letters of any script are written as they are.
(for-each
 (lambda (s) (write s) (newline))
 (list '|+i| '|-i| '|1+2i| '|+NaN.0| '|-inf.0| '|12| '|1/2| '|.| '|#foo|
       '|a b| '|| '|a\|b| (string->symbol "a\\b") (string->symbol "tab\there")
       (string->symbol (string #\a (integer->char 7)))
       'abc '+ '- '... '->x 'héllo '排序 'a.b '|a;b| '|(x)|))
;; what write shows reads back as the same symbol
(write
 (let loop ((ss (list '|+i| '|a b| '|| '|+nan.0| (string->symbol "x\ty") '|a\|b| 'héllo)) (ok '()))
   (if (null? ss)
       (reverse ok)
       (let ((out (open-output-string)))
         (write (car ss) out)
         (loop (cdr ss)
               (cons (eq? (car ss) (read (open-input-string (get-output-string out)))) ok))))))
(newline)
;; a name that starts as a number does but is not one (the reader refuses
;; it as a bad number) is written in bars too, so it reads back
(for-each
 (lambda (s)
   (let ((out (open-output-string)))
     (write s out)
     (write (list (get-output-string out)
                  (eq? s (read (open-input-string (get-output-string out))))))
     (newline)))
 (list (string->symbol "1+") (string->symbol "+.5x") (string->symbol "-1a")
       (string->symbol "1.2.3") (string->symbol ".5.") '+.. '-. '.a))
