;; (srfi 101): the random-access lists under SRFI 101's own names, in
;; place of (scheme base)'s list procedures and `quote`.
(import (except (scheme base) quote pair? cons car cdr cadr cddr null? list? list make-list length
                append reverse list-tail list-ref map for-each)
        (scheme write) (srfi 101))
(define (show . xs) (for-each (lambda (x) (write x) (display " ")) (linear-access-list->random-access-list xs)) (newline))
(define l '(1 2 3 4 5))
(show (pair? l) (car l) (cadr l) (length l) (list-ref l 4) (null? '()) (list? l) (length<=? l 5) (length<=? l 6))
(show (random-access-list->linear-access-list (map (lambda (x) (* x x)) l))
      (random-access-list->linear-access-list (list-set l 0 'x))
      (random-access-list->linear-access-list (append (list 1 2) (cons 3 '())))
      (random-access-list->linear-access-list (reverse (make-list 3 'z)))
      (random-access-list->linear-access-list (list-tail l 3)))
(show (pair? (linear-access-list->random-access-list (vector->list #(a b)))) (car (cddr l)))
;; the engine's own syntax still means the standard procedures, though
;; `car`, `cons`, `list` and `quote` now name SRFI 101's
(define p (make-parameter 1))
(show (parameterize ((p 2)) (p)) (guard (e (#t 'caught)) (raise 'x)) (case 2 ((1) 'one) ((2) 'two))
      (do ((i 0 (+ i 1))) ((= i 3) i)) (let-values (((a b) (values 1 2))) (+ a b)))
