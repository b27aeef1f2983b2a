;; exact->inexact of a rational is the nearest flonum (ties to even), even
;; when the numerator or denominator has more than 53 bits, and when the
;; result is subnormal.
(write (inexact (/ (expt 10 400) (+ (expt 10 399) 1)))) (newline)
(write (inexact (/ (+ (expt 10 399) 1) (expt 10 400)))) (newline)
(write (inexact (/ (expt 3 700) (expt 2 1100)))) (newline)
(write (inexact (/ (+ (* 2 (expt 2 53)) 1) 2))) (newline)
(write (inexact (/ (+ (* 2 (expt 2 53)) 3) 2))) (newline)
(write (inexact 123456789012345678901234567890/7)) (newline)
(write (inexact (/ 1 (expt 2 1074)))) (newline)
(write (inexact (/ 1 (expt 2 1075)))) (newline)
(write (inexact (/ 3 (expt 2 1076)))) (newline)
(write (inexact (/ -3 (expt 2 1076)))) (newline)
(write (inexact (/ 1 (expt 3 700)))) (newline)
(write (inexact (/ (- (expt 10 400)) 3))) (newline)
(write (inexact (/ (- (expt 2 1024) (expt 2 971)) 1))) (newline)
(write (+ 0.5 (/ (expt 10 400) (+ (expt 10 399) 1)))) (newline)
(write (list (inexact 1/3) (inexact -2/3) (inexact 1/10))) (newline)
