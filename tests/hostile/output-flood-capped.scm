;; Output written without end under an output cap: the host prints the
;; first megabyte, drops the rest and stops the evaluation with an
;; output-limit error at its next check, long before the step budget or
;; the timeout; the session goes on.
;; options: --max-output 1M
;; error: output-limit
;; within: 5s
(let loop () (display "xxxxxxxxxx") (loop))
