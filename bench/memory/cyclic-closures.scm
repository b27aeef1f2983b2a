;; Creates N self-referential closures and N cyclic lists, keeping none.
;; N comes from the first line the runner writes before this file.
(define (make-cycle i)
  (letrec ((f (lambda (k) (if (= k 0) f (f (- k 1))))))
    (let ((l (list i f)))
      (set-cdr! (cdr l) l)
      l)))
(let loop ((i 0))
  (if (< i N)
      (begin (make-cycle i) (loop (+ i 1)))))
(display "done") (newline)
