; arb:ref binds local names to stored nodes by id.
(define (show x) (write x) (newline))
(arb:create "(define (quicksort lst) (if (null? lst) lst (let ((p (car lst))) (append (quicksort (filter (lambda (x) (< x p)) (cdr lst))) (list p) (quicksort (filter (lambda (x) (>= x p)) (cdr lst)))))))"
            '() "快速排序实现" "function" '("quicksort"))
(arb:create "(define (helper lst) (map abs lst))" '() "absolute values" "function" '("helper"))
(arb:ref ((quicksort 256) (helper 257))
         (define (my-sort lst) (quicksort (helper lst))))
(show (my-sort '(3 -1 2)))
(show (arb:ref ((s 256)) (s '(9 8 7))))
(show (let ((f (lambda (l) (arb:ref ((q 256)) (q l))))) (f '(2 1))))
(show (arb:ref ((gone 99999)) 'not-used))
(show (guard (e (#t (error-object-message e))) (arb:ref ((gone 99999)) (gone 1))))
