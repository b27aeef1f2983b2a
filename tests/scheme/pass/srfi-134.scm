;; (scheme ideque) = SRFI 134: immutable deques. Every operation leaves
;; its argument as it was.
(import (scheme base) (scheme write) (scheme ideque))
(define (show . xs) (for-each (lambda (x) (write x) (display " ")) xs) (newline))
(define (attempt thunk)
  (guard (e ((error-object? e) (cons 'error (cons (error-object-message e) (error-object-irritants e)))))
    (thunk)))
(define (l dq) (ideque->list dq))
;; constructors
(show (l (ideque)) (l (ideque 1 2 3)) (l (ideque-tabulate 5 (lambda (i) (* i i)))))
(show (l (ideque-unfold (lambda (n) (> n 5)) (lambda (n) (* n 10)) (lambda (n) (+ n 1)) 1))
      (l (ideque-unfold-right (lambda (n) (> n 5)) (lambda (n) (* n 10)) (lambda (n) (+ n 1)) 1)))
;; predicates
(show (ideque? (ideque)) (ideque? '()) (ideque? (list->ideque '(1))) (ideque-empty? (ideque)) (ideque-empty? (ideque 1)))
(show (ideque= eq?) (ideque= eq? (ideque 1)) (ideque= = (ideque 1 2 3) (list->ideque '(1 2 3)))
      (ideque= = (ideque 1 2 3) (ideque 1 2)) (ideque= = (ideque 1 2) (ideque 1 3))
      (ideque= = (ideque 1 2) (ideque-add-back (ideque 1) 2) (ideque-add-front (ideque 2) 1)))
(show (ideque-any odd? (ideque 2 4 5)) (ideque-any (lambda (x) (and (> x 3) (* x 10))) (ideque 1 5 7)) (ideque-any odd? (ideque))
      (ideque-every odd? (ideque 1 3)) (ideque-every (lambda (x) (and (odd? x) x)) (ideque 1 3)) (ideque-every odd? (ideque)) (ideque-every odd? (ideque 1 2)))
;; queue operations: a deque built from both ends, emptied from either
(define d (ideque-add-front (ideque-add-back (ideque-add-back (ideque) 2) 3) 1))
(show (l d) (ideque-front d) (ideque-back d) (l (ideque-remove-front d)) (l (ideque-remove-back d)) (l d))
(define big (ideque-unfold (lambda (n) (= n 100)) values (lambda (n) (+ n 1)) 0))
(show (ideque-front big) (ideque-back big) (ideque-length big))
(define (drain-front dq) (let loop ((dq dq) (acc '())) (if (ideque-empty? dq) (reverse acc) (loop (ideque-remove-front dq) (cons (ideque-front dq) acc)))))
(define (drain-back dq) (let loop ((dq dq) (acc '())) (if (ideque-empty? dq) acc (loop (ideque-remove-back dq) (cons (ideque-back dq) acc)))))
(show (equal? (drain-front big) (iota 100)) (equal? (drain-back big) (iota 100)) (equal? (l big) (iota 100)))
(define mixed (let loop ((i 0) (dq (ideque))) (if (= i 10) dq (loop (+ i 1) (if (even? i) (ideque-add-front dq i) (ideque-add-back dq i))))))
(show (l mixed) (ideque-front (ideque-remove-front (ideque-remove-front mixed))) (ideque-back (ideque-remove-back mixed)))
;; other accessors
(define e (ideque-add-back (ideque-add-back (ideque 0 1 2) 3) 4))
(show (map (lambda (i) (ideque-ref e i)) '(0 1 2 3 4)))
(show (l (ideque-take e 2)) (l (ideque-drop e 2)) (l (ideque-take-right e 2)) (l (ideque-drop-right e 2)) (l (ideque-take e 0)) (l (ideque-drop e 5)))
(call-with-values (lambda () (ideque-split-at e 3)) (lambda (a b) (show (l a) (l b))))
;; the whole ideque
(show (ideque-length e) (ideque-length (ideque)) (l (ideque-append)) (l (ideque-append e)) (l (ideque-append (ideque 1) (ideque) (ideque 2 3))))
(show (l (ideque-reverse e)) (ideque-front (ideque-reverse e)) (ideque-count odd? e) (l (ideque-zip (ideque 1 2 3) (ideque 'a 'b) (ideque "x" "y" "z"))))
;; mapping
(show (l (ideque-map (lambda (x) (* x 10)) e)) (l (ideque-filter-map (lambda (x) (and (odd? x) (- x))) e)))
(define seen '())
(ideque-for-each (lambda (x) (set! seen (cons x seen))) e)
(show seen)
(set! seen '())
(ideque-for-each-right (lambda (x) (set! seen (cons x seen))) e)
(show seen)
(show (ideque-fold cons '() e) (ideque-fold-right cons '() e) (ideque-fold + 0 (ideque)) (l (ideque-append-map (lambda (x) (list x x)) (ideque 1 2))))
;; filtering
(show (l (ideque-filter odd? e)) (l (ideque-remove odd? e)))
(call-with-values (lambda () (ideque-partition odd? e)) (lambda (a b) (show (l a) (l b))))
;; searching
(show (ideque-find even? (ideque 1 3 4 6)) (ideque-find-right even? (ideque 1 3 4 6 7)) (ideque-find even? (ideque 1)) (ideque-find even? (ideque 1) (lambda () 'none)))
(show (l (ideque-take-while odd? (ideque 1 3 4 5))) (l (ideque-drop-while odd? (ideque 1 3 4 5)))
      (l (ideque-take-while-right odd? (ideque 1 2 3 5))) (l (ideque-drop-while-right odd? (ideque 1 2 3 5))))
(call-with-values (lambda () (ideque-span odd? (ideque 1 3 4 5))) (lambda (a b) (show (l a) (l b))))
(call-with-values (lambda () (ideque-break even? (ideque 1 3 4 5))) (lambda (a b) (show (l a) (l b))))
;; conversion
(define g (ideque->generator (ideque 'x 'y)))
(show (g) (g) (eof-object? (g)) (l (generator->ideque (ideque->generator e))))
;; immutability: e is still what it was
(show (l e))
;; errors
(show (attempt (lambda () (ideque-front (ideque)))) (attempt (lambda () (ideque-remove-back (ideque))))
      (attempt (lambda () (ideque-ref (ideque 1) 1))) (attempt (lambda () (ideque-take (ideque 1) 2)))
      (attempt (lambda () (ideque-length '(1 2)))) (attempt (lambda () (ideque-map 5 (ideque)))))
