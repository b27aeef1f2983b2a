;; Output written as fast as the program can, with the default limits: the
;; memory cap (which counts the output buffered for the host) stops it long
;; before the timeout.
;; error: memory-limit
;; within: 30s
(let loop () (display "xxxxxxxxxx") (loop))
