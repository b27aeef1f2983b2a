;; char-upcase and char-downcase are Unicode's simple mappings: where the
;; full mapping is several characters the simple one may still differ from
;; the character (R7RS 6.6).
(write (list (char-downcase #\x130) (char-foldcase #\x130)
             (char-upcase #\x1F80) (char-upcase #\x1FB3) (char-upcase #\x1FC3)
             (char-upcase #\x1FF3) (char-upcase #\ß) (char-upcase #\xFB01)))
(newline)
(write (map char->integer (string->list (string-foldcase (string #\x130))))) (newline)
(write (list (string-downcase "İ") (string-upcase "ß") (string-foldcase "Straße"))) (newline)
;; char-numeric? is Numeric_Type=Decimal: digits of any script, but not
;; superscripts, fractions or Roman numerals, whose digit-value is #f
(write (map char-numeric? (list #\5 #\x664 #\xFF19 #\x1D7D9 #\xB2 #\xBD #\x2167 #\a)))
(newline)
(write (map digit-value (list #\5 #\x664 #\xFF19 #\x1D7D9 #\x1D7E2 #\x1E959 #\xB2 #\a)))
(newline)
