;; equal? and write of million-element lists, over and over, with a
;; small step budget: the work each call does is charged to the budget, so
;; a few calls use it up.
;; options: --fuel 10000000
;; error: step-limit
;; within: 10s
(let* ((a (make-list 1000000 'x)) (b (list-copy a)))
  (let loop () (equal? a b) (write a (open-output-string)) (member 'y b) (loop)))
