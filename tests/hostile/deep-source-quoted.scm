;; A quoted datum a million levels deep in the source text: read, compiled
;; as a constant, and walked.
;; value: 1000000
;; within: 20s
(define d '{{1000000*(}}x{{1000000*)}})
(let loop ((d d) (n 0)) (if (pair? d) (loop (car d) (+ n 1)) n))
