;; The value of the evaluation is a structure that shares its parts 120
;; levels deep: 120 pairs in the heap, 2^120 leaves written out. Printing
;; the value is work like any: charged to the budget, polling the
;; interrupt check, so the timeout stops it.
;; options: --timeout 1
;; error: interrupted
;; within: 1.6s
(let loop ((i 0) (v 'x))
  (if (< i 120) (loop (+ i 1) (cons v v)) v))
