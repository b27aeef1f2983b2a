;; Lists built by the primitives that make many pairs at once (`list`,
;; `cons*`, `append`, `list-copy`, which build a chunk of 4096 pairs at a
;; time) and by `cons` onto a list being built: every element in order,
;; and the tail where it belongs, at and around the chunk's size.

;; (0 1 ... n-1), built by `cons` alone.
(define (iota n)
  (let loop ((i (- n 1)) (acc '()))
    (if (< i 0) acc (loop (- i 1) (cons i acc)))))

;; Whether `l` is (a a+1 ... a+n-1) followed by `tail` (compared with
;; `eq?`).
(define (run? l a n tail)
  (let loop ((l l) (i 0))
    (if (= i n)
        (eq? l tail)
        (and (pair? l) (eqv? (car l) (+ a i)) (loop (cdr l) (+ i 1))))))

(define tail (list 'x 'y))

(for-each
 (lambda (n)
   (let ((items (iota n)))
     (write (list n
                  (run? (apply list items) 0 n '())
                  (run? (apply cons* (append items (list tail))) 0 n tail)
                  (run? (append items tail) 0 n tail)
                  (run? (append items items) 0 n (list-tail (append items items) n))
                  (run? (list-tail (append items items) n) 0 n '())
                  (let ((c (list-copy items)))
                    (and (run? c 0 n '()) (or (= n 0) (not (eq? c items)))))))
     (newline)))
 '(0 1 2 3 4095 4096 4097 8192 8193 10000))

;; Short lists, printed whole: the tails of `cons*` and `append` are kept
;; as they are (improper, or shared).
(write (list 1 2 3)) (newline)
(write (cons* 1 2 3)) (newline)
(write (cons* 1 2 '(3 4))) (newline)
(write (cons* 'a)) (newline)
(write (append '(1 2) 3)) (newline)
(write (append '(1) '(2) '(3 4) '())) (newline)
(write (eq? (cdr (append '(1) tail)) tail)) (newline)

;; `cons` onto a list being built and onto '(), with a `let`'s variable
;; pushed twice just after it is bound.
(define (pairs-of l)
  (if (pair? l)
      (let ((v (* 10 (car l))))
        (cons (cons v v) (pairs-of (cdr l))))
      '()))
(write (pairs-of '(1 2 3))) (newline)
(write (map (lambda (x) (list x (cons x '()) (cons '+ (list x)))) '(1 2))) (newline)
