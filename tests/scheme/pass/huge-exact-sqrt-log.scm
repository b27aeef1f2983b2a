;; sqrt and log of an exact number beyond the flonums' range: the result is
;; within range, so it is not taken of +inf.0 or 0.0.
(write (list (sqrt (expt 10 401)) (sqrt (+ 1 (expt 10 400))) (sqrt (/ 1 (expt 10 401)))
             (sqrt (/ (expt 10 401) 7)) (sqrt (- (expt 10 401)))))
(newline)
(write (list (log (expt 10 400)) (log (/ 1 (expt 10 400))) (log (expt 10 400) 10)
             (exact (floor (log (expt 2 2000) 2))) (log (- (expt 10 400)))))
(newline)
;; in range, nothing changes
(write (list (sqrt 16) (sqrt 2) (sqrt 1/4) (sqrt (expt 2 1023)) (log 8) (log 1/3) (log 1024 2)
             (log (expt 2 1023))))
(newline)
