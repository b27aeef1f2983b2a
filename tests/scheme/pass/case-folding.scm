;; char-foldcase and string-foldcase use Unicode case folding (R7RS 6.6,
;; 6.7), which differs from downcasing for variant letter forms.
(define (codes s) (map char->integer (string->list s)))
(write (map (lambda (c) (char->integer (char-foldcase c)))
            (list #\A #\x17F #\x3C2 #\xB5 #\x3D0 #\x3D1 #\x3D5 #\x3F0 #\x1E9B #\xAB70 #\x13F8 #\x130)))
(newline)
(write (codes (string-foldcase "Straße ſ ΣΑΣ ς"))) (newline)
(write (list (string-ci=? "ſ" "s" "S") (char-ci=? #\x17F #\s) (string-ci=? "µ" "Μ")
             (string-ci<? "ſa" "sb") (char-foldcase #\1))) (newline)
(write (string-foldcase "ΑΒΓ")) (newline)
