;; equal? and write of million-element lists, over and over: each call
;; is one step but long work, charged to the budget as it goes and polling
;; the interrupt check, so the timeout stops it within milliseconds.
;; options: --timeout 2
;; error: interrupted
;; within: 2.5s
(let* ((a (make-list 1000000 'x)) (b (list-copy a)))
  (let loop () (equal? a b) (write a (open-output-string)) (member 'y b) (loop)))
