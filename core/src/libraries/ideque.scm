;; (scheme ideque), also (srfi 134): immutable deques. An ideque is a
;; front list, a back list in reverse order, and both lengths. When an
;; end is taken from a side that is empty, the other side is split in
;; half, so `ideque-front`, `-back`, `-add-` and `-remove-` are amortized
;; O(1); `ideque-length` and `ideque-reverse` are O(1).
(define-library (scheme ideque)
  (export
   ideque ideque-tabulate ideque-unfold ideque-unfold-right
   ideque? ideque-empty? ideque= ideque-any ideque-every
   ideque-front ideque-back ideque-remove-front ideque-remove-back
   ideque-add-front ideque-add-back
   ideque-ref ideque-take ideque-take-right ideque-drop ideque-drop-right
   ideque-split-at
   ideque-length ideque-append ideque-reverse ideque-count ideque-zip
   ideque-map ideque-filter-map ideque-for-each ideque-for-each-right
   ideque-fold ideque-fold-right ideque-append-map
   ideque-filter ideque-remove ideque-partition
   ideque-find ideque-find-right ideque-take-while ideque-take-while-right
   ideque-drop-while ideque-drop-while-right ideque-span ideque-break
   list->ideque ideque->list generator->ideque ideque->generator)
  (import (scheme base))
  (begin
    (define fail %expected)

    (define-record-type <ideque>
      (make-dq flen front blen back)
      ideque?
      (flen dq-flen)
      (front dq-front)
      (blen dq-blen)
      (back dq-back))

    (define (check who dq)
      (if (not (ideque? dq)) (fail who "an ideque" dq)))

    (define check-procedure %check-procedure)

    (define check-list %check-list)

    (define (check-count who dq n)
      (if (not (and (exact-integer? n) (>= n 0)))
          (fail who "a non-negative exact integer" n))
      (if (> n (ideque-length dq))
          (error (string-append (symbol->string who)
                                ": the count is larger than the ideque's length")
                 n (ideque-length dq))))

    (define empty (make-dq 0 '() 0 '()))

    (define (list->ideque l)
      (check-list 'list->ideque l)
      (make-dq (length l) l 0 '()))

    (define (ideque . elements) (make-dq (length elements) elements 0 '()))

    (define (ideque->list dq)
      (check 'ideque->list dq)
      (if (null? (dq-back dq))
          (dq-front dq)
          (append (dq-front dq) (reverse (dq-back dq)))))

    (define (ideque-tabulate n proc)
      (if (not (and (exact-integer? n) (>= n 0)))
          (fail 'ideque-tabulate "a non-negative exact integer" n))
      (check-procedure 'ideque-tabulate proc)
      (let loop ((i (- n 1)) (acc '()))
        (if (< i 0) (make-dq n acc 0 '()) (loop (- i 1) (cons (proc i) acc)))))

    (define (unfold who stop? mapper successor seed)
      (check-procedure who stop?)
      (check-procedure who mapper)
      (check-procedure who successor)
      (let loop ((seed seed) (acc '()) (n 0))
        (if (stop? seed)
            (values acc n)
            (loop (successor seed) (cons (mapper seed) acc) (+ n 1)))))

    (define (ideque-unfold stop? mapper successor seed)
      (let-values (((rev n) (unfold 'ideque-unfold stop? mapper successor seed)))
        (make-dq 0 '() n rev)))

    (define (ideque-unfold-right stop? mapper successor seed)
      (let-values (((rev n) (unfold 'ideque-unfold-right stop? mapper successor seed)))
        (make-dq n rev 0 '())))

    (define (ideque-empty? dq)
      (check 'ideque-empty? dq)
      (and (= 0 (dq-flen dq)) (= 0 (dq-blen dq))))

    (define (ideque-length dq)
      (check 'ideque-length dq)
      (+ (dq-flen dq) (dq-blen dq)))

    ;; The deque with the front side holding at least one element, when
    ;; it holds any: an empty front takes the first half of the back.
    (define (front-ready dq)
      (if (and (null? (dq-front dq)) (pair? (dq-back dq)))
          (let* ((n (dq-blen dq))
                 (keep (quotient n 2))
                 (items (reverse (dq-back dq))))
            ;; items in order; the back keeps the last `keep` of them
            (let split ((i (- n keep)) (l items) (front-rev '()))
              (if (= i 0)
                  (make-dq (- n keep) (reverse front-rev) keep (reverse l))
                  (split (- i 1) (cdr l) (cons (car l) front-rev)))))
          dq))

    (define (back-ready dq)
      (if (and (null? (dq-back dq)) (pair? (dq-front dq)))
          (let* ((n (dq-flen dq))
                 (keep (quotient n 2)))
            (let split ((i keep) (l (dq-front dq)) (front-rev '()))
              (if (= i 0)
                  (make-dq keep (reverse front-rev) (- n keep) (reverse l))
                  (split (- i 1) (cdr l) (cons (car l) front-rev)))))
          dq))

    (define (ideque-front dq)
      (check 'ideque-front dq)
      (let ((dq (front-ready dq)))
        (if (null? (dq-front dq)) (error "ideque-front: the ideque is empty"))
        (car (dq-front dq))))

    (define (ideque-back dq)
      (check 'ideque-back dq)
      (let ((dq (back-ready dq)))
        (if (null? (dq-back dq)) (error "ideque-back: the ideque is empty"))
        (car (dq-back dq))))

    (define (ideque-remove-front dq)
      (check 'ideque-remove-front dq)
      (let ((dq (front-ready dq)))
        (if (null? (dq-front dq)) (error "ideque-remove-front: the ideque is empty"))
        (make-dq (- (dq-flen dq) 1) (cdr (dq-front dq)) (dq-blen dq) (dq-back dq))))

    (define (ideque-remove-back dq)
      (check 'ideque-remove-back dq)
      (let ((dq (back-ready dq)))
        (if (null? (dq-back dq)) (error "ideque-remove-back: the ideque is empty"))
        (make-dq (dq-flen dq) (dq-front dq) (- (dq-blen dq) 1) (cdr (dq-back dq)))))

    (define (ideque-add-front dq x)
      (check 'ideque-add-front dq)
      (make-dq (+ (dq-flen dq) 1) (cons x (dq-front dq)) (dq-blen dq) (dq-back dq)))

    (define (ideque-add-back dq x)
      (check 'ideque-add-back dq)
      (make-dq (dq-flen dq) (dq-front dq) (+ (dq-blen dq) 1) (cons x (dq-back dq))))

    (define (ideque-reverse dq)
      (check 'ideque-reverse dq)
      (make-dq (dq-blen dq) (dq-back dq) (dq-flen dq) (dq-front dq)))

    (define (ideque-ref dq n)
      (check 'ideque-ref dq)
      (if (not (and (exact-integer? n) (>= n 0) (< n (ideque-length dq))))
          (error "ideque-ref: index out of range" n (ideque-length dq)))
      (if (< n (dq-flen dq))
          (list-ref (dq-front dq) n)
          (list-ref (dq-back dq) (- (ideque-length dq) n 1))))

    (define (take-list l n)
      (let loop ((l l) (n n) (acc '()))
        (if (= n 0) (reverse acc) (loop (cdr l) (- n 1) (cons (car l) acc)))))

    (define (ideque-take dq n)
      (check 'ideque-take dq)
      (check-count 'ideque-take dq n)
      (make-dq n (take-list (ideque->list dq) n) 0 '()))

    (define (ideque-drop dq n)
      (check 'ideque-drop dq)
      (check-count 'ideque-drop dq n)
      (let ((l (list-tail (ideque->list dq) n)))
        (make-dq (- (ideque-length dq) n) l 0 '())))

    (define (ideque-take-right dq n)
      (check 'ideque-take-right dq)
      (check-count 'ideque-take-right dq n)
      (ideque-reverse (ideque-take (ideque-reverse dq) n)))

    (define (ideque-drop-right dq n)
      (check 'ideque-drop-right dq)
      (check-count 'ideque-drop-right dq n)
      (ideque-reverse (ideque-drop (ideque-reverse dq) n)))

    (define (ideque-split-at dq n)
      (check 'ideque-split-at dq)
      (check-count 'ideque-split-at dq n)
      (values (ideque-take dq n) (ideque-drop dq n)))

    (define (ideque-append . dqs)
      (for-each (lambda (dq) (check 'ideque-append dq)) dqs)
      (cond ((null? dqs) empty)
            ((null? (cdr dqs)) (car dqs))
            (else
             (let ((l (apply append (map ideque->list dqs))))
               (make-dq (length l) l 0 '())))))

    (define (ideque= elt= . dqs)
      (check-procedure 'ideque= elt=)
      (for-each (lambda (dq) (check 'ideque= dq)) dqs)
      (let loop ((dqs dqs))
        (or (null? dqs) (null? (cdr dqs))
            (and (let ((a (car dqs)) (b (cadr dqs)))
                   (or (eq? a b)
                       (and (= (ideque-length a) (ideque-length b))
                            (let walk ((x (ideque->list a)) (y (ideque->list b)))
                              (or (null? x)
                                  (and (elt= (car x) (car y))
                                       (walk (cdr x) (cdr y))))))))
                 (loop (cdr dqs))))))

    (define (ideque-any pred dq)
      (check-procedure 'ideque-any pred)
      (check 'ideque-any dq)
      (let loop ((l (ideque->list dq)))
        (and (pair? l)
             (if (null? (cdr l)) (pred (car l)) (or (pred (car l)) (loop (cdr l)))))))

    (define (ideque-every pred dq)
      (check-procedure 'ideque-every pred)
      (check 'ideque-every dq)
      (let loop ((l (ideque->list dq)))
        (or (null? l)
            (if (null? (cdr l)) (pred (car l)) (and (pred (car l)) (loop (cdr l)))))))

    (define (ideque-count pred dq)
      (check-procedure 'ideque-count pred)
      (check 'ideque-count dq)
      (let loop ((l (ideque->list dq)) (n 0))
        (if (null? l) n (loop (cdr l) (if (pred (car l)) (+ n 1) n)))))

    (define (ideque-zip dq . dqs)
      (for-each (lambda (d) (check 'ideque-zip d)) (cons dq dqs))
      (let loop ((ls (map ideque->list (cons dq dqs))) (acc '()) (n 0))
        (if (memq '() ls)
            (make-dq n (reverse acc) 0 '())
            (loop (map cdr ls) (cons (map car ls) acc) (+ n 1)))))

    (define (ideque-map proc dq)
      (check-procedure 'ideque-map proc)
      (check 'ideque-map dq)
      (make-dq (dq-flen dq) (map proc (dq-front dq)) (dq-blen dq) (map proc (dq-back dq))))

    (define (from-list l) (make-dq (length l) l 0 '()))

    (define (filter-list pred l)
      (let loop ((l l) (acc '()))
        (cond ((null? l) (reverse acc))
              ((pred (car l)) (loop (cdr l) (cons (car l) acc)))
              (else (loop (cdr l) acc)))))

    (define (ideque-filter-map proc dq)
      (check-procedure 'ideque-filter-map proc)
      (check 'ideque-filter-map dq)
      (let loop ((l (ideque->list dq)) (acc '()))
        (if (null? l)
            (from-list (reverse acc))
            (let ((v (proc (car l))))
              (loop (cdr l) (if v (cons v acc) acc))))))

    (define (ideque-for-each proc dq)
      (check-procedure 'ideque-for-each proc)
      (check 'ideque-for-each dq)
      (for-each proc (ideque->list dq)))

    (define (ideque-for-each-right proc dq)
      (check-procedure 'ideque-for-each-right proc)
      (check 'ideque-for-each-right dq)
      (for-each proc (ideque->list (ideque-reverse dq))))

    (define (ideque-fold proc nil dq)
      (check-procedure 'ideque-fold proc)
      (check 'ideque-fold dq)
      (let loop ((l (ideque->list dq)) (acc nil))
        (if (null? l) acc (loop (cdr l) (proc (car l) acc)))))

    (define (ideque-fold-right proc nil dq)
      (check-procedure 'ideque-fold-right proc)
      (check 'ideque-fold-right dq)
      (let loop ((l (ideque->list (ideque-reverse dq))) (acc nil))
        (if (null? l) acc (loop (cdr l) (proc (car l) acc)))))

    (define (ideque-append-map proc dq)
      (check-procedure 'ideque-append-map proc)
      (check 'ideque-append-map dq)
      (from-list
       (apply append
              (map (lambda (x)
                     (let ((r (proc x)))
                       (check-list 'ideque-append-map r)
                       r))
                   (ideque->list dq)))))

    (define (ideque-filter pred dq)
      (check-procedure 'ideque-filter pred)
      (check 'ideque-filter dq)
      (from-list (filter-list pred (ideque->list dq))))

    (define (ideque-remove pred dq)
      (check-procedure 'ideque-remove pred)
      (check 'ideque-remove dq)
      (from-list (filter-list (lambda (x) (not (pred x))) (ideque->list dq))))

    (define (ideque-partition pred dq)
      (check-procedure 'ideque-partition pred)
      (check 'ideque-partition dq)
      (let loop ((l (ideque->list dq)) (in '()) (out '()))
        (cond ((null? l) (values (from-list (reverse in)) (from-list (reverse out))))
              ((pred (car l)) (loop (cdr l) (cons (car l) in) out))
              (else (loop (cdr l) in (cons (car l) out))))))

    (define (find-in who pred l failure)
      (check-procedure who pred)
      (let ((failure (if (pair? failure) (car failure) (lambda () #f))))
        (check-procedure who failure)
        (let loop ((l l))
          (cond ((null? l) (failure))
                ((pred (car l)) (car l))
                (else (loop (cdr l)))))))

    (define (ideque-find pred dq . failure)
      (check 'ideque-find dq)
      (find-in 'ideque-find pred (ideque->list dq) failure))

    (define (ideque-find-right pred dq . failure)
      (check 'ideque-find-right dq)
      (find-in 'ideque-find-right pred (ideque->list (ideque-reverse dq)) failure))

    ;; The longest prefix of l whose elements satisfy pred, and the rest.
    (define (span-list pred l)
      (let loop ((l l) (acc '()))
        (if (and (pair? l) (pred (car l)))
            (loop (cdr l) (cons (car l) acc))
            (values (reverse acc) l))))

    (define (ideque-take-while pred dq)
      (check-procedure 'ideque-take-while pred)
      (check 'ideque-take-while dq)
      (let-values (((head rest) (span-list pred (ideque->list dq))))
        (from-list head)))

    (define (ideque-drop-while pred dq)
      (check-procedure 'ideque-drop-while pred)
      (check 'ideque-drop-while dq)
      (let-values (((head rest) (span-list pred (ideque->list dq))))
        (from-list rest)))

    (define (ideque-take-while-right pred dq)
      (check-procedure 'ideque-take-while-right pred)
      (check 'ideque-take-while-right dq)
      (ideque-reverse (ideque-take-while pred (ideque-reverse dq))))

    (define (ideque-drop-while-right pred dq)
      (check-procedure 'ideque-drop-while-right pred)
      (check 'ideque-drop-while-right dq)
      (ideque-reverse (ideque-drop-while pred (ideque-reverse dq))))

    (define (ideque-span pred dq)
      (check-procedure 'ideque-span pred)
      (check 'ideque-span dq)
      (let-values (((head rest) (span-list pred (ideque->list dq))))
        (values (from-list head) (from-list rest))))

    (define (ideque-break pred dq)
      (check-procedure 'ideque-break pred)
      (check 'ideque-break dq)
      (let-values (((head rest) (span-list (lambda (x) (not (pred x))) (ideque->list dq))))
        (values (from-list head) (from-list rest))))

    (define (generator->ideque gen)
      (check-procedure 'generator->ideque gen)
      (let loop ((acc '()) (n 0))
        (let ((v (gen)))
          (if (eof-object? v)
              (make-dq 0 '() n acc)
              (loop (cons v acc) (+ n 1))))))

    (define (ideque->generator dq)
      (check 'ideque->generator dq)
      (let ((l (ideque->list dq)))
        (lambda ()
          (if (null? l)
              (eof-object)
              (let ((v (car l))) (set! l (cdr l)) v)))))

    (define %loaded #t)))
