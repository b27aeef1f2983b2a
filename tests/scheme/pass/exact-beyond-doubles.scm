;; Exact numbers beyond the range of doubles against infinities (R7RS
;; 6.2.6): every exact number is finite, so it lies strictly between
;; -inf.0 and +inf.0 however large it is, and =, <, >, <=, >= stay
;; transitive ("These predicates are required to be transitive").
(define big (expt 10 400))
(write (list (= big +inf.0) (< big +inf.0) (> big +inf.0) (<= big +inf.0) (>= big +inf.0))) (newline)
(write (list (= (- big) -inf.0) (> (- big) -inf.0) (< (- big) -inf.0))) (newline)
(write (list (< -inf.0 (- big) 0 big +inf.0) (> +inf.0 big 1e308 0))) (newline)
;; A ratio whose nearest double overflows, and 2^1024, the first integer
;; past the largest double.
(write (list (= (/ big 3) +inf.0) (< (/ big 3) +inf.0) (= (expt 2 1024) +inf.0)
             (< (expt 2 1024) +inf.0) (> (- (expt 2 1024) 1) 1.7976931348623157e308)))
(newline)
;; Against finite doubles the comparison is exact, and a NaN is unordered.
(write (list (> big 1e308) (= big 1e308) (= big +nan.0) (< big +nan.0) (> big +nan.0))) (newline)
;; Complex numbers are = when both parts are.
(write (list (= (make-rectangular big 1) +inf.0+1.0i) (= (make-rectangular 1 big) 1.0+inf.0i))) (newline)
