;; A sort with the program's own order (the library calls it between the
;; steps of a native merge sort): the order may raise, escape by a
;; continuation or be re-entered, and the sort stays stable over many ties.
(import (scheme base) (scheme write) (scheme sort))
(define (show . xs) (for-each (lambda (x) (write x) (display " ")) xs) (newline))
(define data (let loop ((i 0) (acc '()))
               (if (= i 2000) acc (loop (+ i 1) (cons (modulo (* i 7919) 1009) acc)))))
(define v (list->vector data))
;; stable over many ties: pairs (key . original position), compared by key
(define tagged (let loop ((l data) (i 0) (acc '()))
                 (if (null? l) (reverse acc) (loop (cdr l) (+ i 1) (cons (cons (modulo (car l) 10) i) acc)))))
(define (car< a b) (< (car a) (car b)))
(define (stable? l)
  (or (null? l) (null? (cdr l))
      (and (or (< (car (car l)) (car (cadr l)))
               (and (= (car (car l)) (car (cadr l))) (< (cdr (car l)) (cdr (cadr l)))))
           (stable? (cdr l)))))
(show (stable? (list-sort car< tagged)) (stable? (vector->list (vector-sort car< (list->vector tagged)))))
(show (equal? (list-sort (lambda (a b) (< a b)) data) (list-sort < data))
      (equal? (vector-sort (lambda (a b) (> a b)) v 100 1900) (vector-sort > v 100 1900)))
;; an error in the order reaches the program's handler; v is unchanged
(define calls 0)
(show (guard (e ((error-object? e) (list (error-object-message e) (error-object-irritants e))))
        (vector-sort! (lambda (a b) (set! calls (+ calls 1)) (if (= calls 500) (error "order failed" a b) (< a b))) v)
        'sorted))
(show (equal? v (list->vector data)))
;; an escape from the order ends the sort
(show (call-with-current-continuation
       (lambda (k) (list-sort (lambda (a b) (if (and (= a 0) (= b 0)) (k 'escaped) (< a b))) data))))
;; an order that is not a procedure, and one that returns anything
(show (guard (e ((error-object? e) (error-object-message e))) (list-sort 5 '(2 1))))
(show (list-sort (lambda (a b) 'yes) '(1 2 3)) (list-sort (lambda (a b) #f) '(3 1 2)))
;; re-entering the order's continuation after the sort ended goes on with
;; the sort's state as it is then: no crash, and the elements are all there
(show (let ((k #f) (n 0))
        (let ((r (vector-sort (lambda (a b)
                                (if (not k) (call-with-current-continuation (lambda (c) (set! k c))))
                                (< a b))
                              (vector 5 3 9 1 7))))
          (set! n (+ n 1))
          (if (< n 3) (k #t))
          (list n (vector-length r) (vector-sort < r)))))
;; sizes 0, 1, 2 and odd ones
(show (vector-sort car< #()) (vector-sort car< #((1 . a))) (list-sort car< '((2 . a) (1 . b)))
      (list-sort (lambda (a b) (< a b)) '(5 4 3 2 1 0 9)))
