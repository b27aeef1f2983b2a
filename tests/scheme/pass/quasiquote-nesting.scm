;; Nested quasiquote (R7RS 4.2.8): an unquote-splicing one level inside a
;; nested unquote splices into it, and `(a unquote x)`, the same datum as
;; `(a . ,x)`, is the same template.
(define x '(a b))
(define y 5)
(write `(1 `(2 ,,@x))) (newline)
(write `(1 `(2 ,@,@x))) (newline)
(write `(1 `(2 ,(3 ,@x)))) (newline)
(write `(1 `,(+ 1 ,y))) (newline)
(write (let ((name1 'x) (name2 'y)) `(a `(b ,,name1 ,',name2 d) e))) (newline)
(write `(a `(b ,(c) ,@(d ,@x)) ,y)) (newline)
(write `(a unquote y)) (newline)
(write `(a . ,y)) (newline)
(write `(1 ,@x unquote y)) (newline)
(write `(1 `(2 unquote ,y))) (newline)
;; a vector template's elements are taken as they are
(write (list `#(1 unquote y) `#(1 ,y) `#(unquote y) `#(,@x ,y))) (newline)
