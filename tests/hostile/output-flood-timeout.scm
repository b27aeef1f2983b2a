;; Output written as fast as the program can, stopped by the timeout: the
;; text not yet handed to the host is counted against the memory cap. The
;; bound allows for printing what was written after the stop.
;; options: --timeout 3
;; error: interrupted
;; within: 3.5s
(let loop () (display "xxxxxxxxxx") (loop))
