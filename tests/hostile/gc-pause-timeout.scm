;; Eight million live pairs and a loop that makes garbage as fast as it
;; can: most of the time goes to collections, each marking the eight
;; million pairs (over half a second, natively, on a loaded machine). The
;; timeout must stop it within 100 ms even in the middle of a collection:
;; the collector asks the interrupt check as it marks.
;; options: --timeout 3
;; error: interrupted
;; within: 3.1s
(let ((keep (make-list 8000000 'x)))
  (let loop ((i 0)) (make-vector 100000 0) (loop (+ i 1)))
  keep)
