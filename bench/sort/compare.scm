;; The library's sort with a program's order (native merge steps) against
;; the merge sort of lists in Scheme that the library had before, defined
;; here, on the same 100,000 fixnums; each timed by the program itself.
;; The former sort merged with the library's own merge of lists, which
;; `list-merge` still is (it checks its arguments first: a walk of each
;; list, native, beside the calls of the order).
(import (scheme base) (scheme write) (scheme time) (scheme sort))
(define n 100000)
(define data
  (let loop ((i 0) (x 12345) (acc '()))
    (if (= i n) acc
        (let ((x (modulo (+ (* x 1103515245) 12345) 2147483648)))
          (loop (+ i 1) x (cons x acc))))))
(define (sort-prefix less l n)
  (cond ((= n 0) (values '() l))
        ((= n 1) (values (list (car l)) (cdr l)))
        (else
         (let*-values (((h) (quotient n 2))
                       ((a rest) (sort-prefix less l h))
                       ((b rest) (sort-prefix less rest (- n h))))
           (values (list-merge less a b) rest)))))
(define (old-list-sort less l)
  (let-values (((sorted rest) (sort-prefix less l (length l)))) sorted))
(define less (lambda (a b) (< a b)))
(define (timed thunk)
  (let ((t0 (current-jiffy)))
    (let ((r (thunk)))
      (cons (/ (round (* 1000 (/ (- (current-jiffy) t0) (jiffies-per-second)))) 1000.0) r))))
(define old (timed (lambda () (old-list-sort less data))))
(define new (timed (lambda () (list-sort less data))))
(define calls 0)
(define counted (lambda (a b) (set! calls (+ calls 1)) (< a b)))
(list-sort counted data)
(display (list 'old-seconds (car old) 'new-seconds (car new) 'same (equal? (cdr old) (cdr new)) 'comparisons calls))
(newline)
