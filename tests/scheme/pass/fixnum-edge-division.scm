;; The least fixnum divided by -1 is a bignum; exact division and the
;; floor family of it panicked the engine (i64::MIN % -1 overflows).
(define least (- (expt 2 63)))
(write (list (/ least -1) (floor-quotient least -1) (floor-remainder least -1)
             (call-with-values (lambda () (floor/ least -1)) list)
             (call-with-values (lambda () (truncate/ least -1)) list)
             (quotient least -1) (remainder least -1) (modulo least -1)
             (/ least 2) (/ least -2) (/ least least) (/ -1 least)))
(newline)
