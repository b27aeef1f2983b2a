;; A ten-million-element list: length, written out, compared.
;; options: --memory 896M
;; value: 10000000
;; value: #t
;; value: 20000001
;; within: 30s
(define l (make-list 10000000 'x))
(length l)
(equal? (list-copy (list-tail l 9000000)) (list-tail l 9000000))
(string-length (let ((p (open-output-string))) (write l p) (get-output-string p)))
