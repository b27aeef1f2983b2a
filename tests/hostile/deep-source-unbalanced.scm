;; A million open parentheses and no closing one: an error that says where
;; the unclosed list starts, bounded by memory, not a stack.
;; mode: run
;; error: syntax-error
;; message: not closed
;; within: 10s
{{1000000*(}}
