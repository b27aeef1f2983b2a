;; Number syntax (R7RS 7.1.1): the letters of +inf.0 and +nan.0 in any
;; case, the R5RS exponent markers s f d l (read as double precision, as
;; most Schemes do), and rationalize (6.2.6).
(write (list +NAN.0 +NaN.0 +InF.0 -iNF.0 #i+InF.0)) (newline)
(write (map (lambda (s) (string->number s)) '("+Inf.0" "-INF.0" "+nAn.0" "+infx.0" "inf.0"))) (newline)
(write (list 1s2 1S2 1f2 1F2 1d2 1D2 1l2 1L2 -2.5d-1 #d1e2)) (newline)
(write (map string->number '("1e" "1s" "1x2" "1d2.5" "#x1d2"))) (newline)
(write (symbol? (read (open-input-string "+inf.0x")))) (newline)
;; From the standard: (rationalize (exact .3) 1/10) => 1/3, (rationalize .3 1/10) => #i1/3
(write (list (rationalize (exact .3) 1/10) (rationalize .3 1/10))) (newline)
(write (list (rationalize 3/10 1/10) (rationalize -3/10 1/10) (rationalize 1/4 1/4)
             (rationalize 5 1/2) (rationalize 22/7 0) (rationalize 1/3 -1/100))) (newline)
(write (list (rationalize +inf.0 3) (rationalize 3 +inf.0) (nan? (rationalize +nan.0 1))
             (exact? (rationalize 1/3 1/10)) (inexact? (rationalize 1/3 0.1)))) (newline)
