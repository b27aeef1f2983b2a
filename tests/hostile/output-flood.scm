;; Output written as fast as the program can, far more of it (about 25 MB) than
;; the memory cap (16M) could hold: the engine hands the output to the host
;; as it is written, so the process stays small however much is printed,
;; and the step budget ends the flood.
;; options: --memory 16M --fuel 8000000
;; error: step-limit
;; within: 10s
(let loop () (display "xxxxxxxxxx") (loop))
