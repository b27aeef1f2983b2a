;; Output written as fast as the program can, stopped by the timeout: the
;; engine hands the output to the host as it is written, so little is left
;; to print after the stop.
;; options: --timeout 3
;; error: interrupted
;; within: 3.5s
(let loop () (display "xxxxxxxxxx") (loop))
