;; A string port holding 30 million characters (120 MB as characters),
;; copied out twice by `get-output-string` under a 256 MB cap, a few steps
;; apart (no poll of the memory meter between them): each copy must be
;; checked against the cap before it is made.
;; options: --memory 256M
;; error: memory-limit
;; within: 10s
(define p (open-output-string))
(define chunk (make-string 1000 #\a))
(let loop ((i 0)) (if (< i 30000) (begin (write-string chunk p) (loop (+ i 1)))))
(define s (get-output-string p))
(define t (get-output-string p))
