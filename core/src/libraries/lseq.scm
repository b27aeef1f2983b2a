;; (scheme lseq), also (srfi 127): lazy sequences. An lseq is a list whose
;; last cdr may be a generator (a procedure of no arguments returning the
;; next element, then an end-of-file object); `lseq-cdr` calls it when the
;; rest is first needed and replaces it by what it produced, so each
;; element is generated once. `lseq-take`, `lseq-append`, `lseq-map`,
;; `lseq-zip`, `lseq-filter` and `lseq-remove` are lazy; the others walk as
;; far as they must.
(define-library (scheme lseq)
  (export
   generator->lseq lseq? lseq=?
   lseq-car lseq-first lseq-cdr lseq-rest lseq-ref lseq-take lseq-drop
   lseq-realize lseq->generator lseq-length lseq-append lseq-zip
   lseq-map lseq-for-each lseq-filter lseq-remove
   lseq-find lseq-find-tail lseq-any lseq-every lseq-index
   lseq-member lseq-memq lseq-memv)
  (import (scheme base))
  (begin
    (define fail %expected)

    (define check-procedure %check-procedure)

    (define (check-pair who l)
      (if (not (pair? l)) (fail who "a non-empty lseq" l)))

    (define check-index %check-count)

    (define (generator->lseq gen)
      (check-procedure 'generator->lseq gen)
      (let ((v (gen)))
        (if (eof-object? v) '() (cons v gen))))

    (define (lseq? x)
      (cond ((null? x) #t)
            ((pair? x)
             (let loop ((x (cdr x)))
               (cond ((null? x) #t)
                     ((pair? x) (loop (cdr x)))
                     (else (procedure? x)))))
            (else #f)))

    (define (lseq-car l) (check-pair 'lseq-car l) (car l))
    (define (lseq-first l) (check-pair 'lseq-first l) (car l))

    (define (lseq-cdr l)
      (check-pair 'lseq-cdr l)
      (let ((rest (cdr l)))
        (if (procedure? rest)
            (let ((v (rest)))
              (set-cdr! l (if (eof-object? v) '() (cons v rest)))
              (cdr l))
            rest)))

    (define (lseq-rest l) (lseq-cdr l))

    (define (lseq-ref l k)
      (check-index 'lseq-ref k)
      (let loop ((l l) (k k))
        (check-pair 'lseq-ref l)
        (if (= k 0) (car l) (loop (lseq-cdr l) (- k 1)))))

    (define (lseq-drop l k)
      (check-index 'lseq-drop k)
      (let loop ((l l) (k k))
        (cond ((= k 0) l)
              ((pair? l) (loop (lseq-cdr l) (- k 1)))
              (else (error "lseq-drop: the lseq is shorter than the count" k)))))

    (define (lseq-realize l)
      (let loop ((x l))
        (if (pair? x) (loop (lseq-cdr x))))
      l)

    (define (lseq->generator l)
      (lambda ()
        (if (pair? l)
            (let ((v (car l)))
              (set! l (lseq-cdr l))
              v)
            (eof-object))))

    (define (lseq-length l) (length (lseq-realize l)))

    (define (lseq-take l k)
      (check-index 'lseq-take k)
      (generator->lseq
       (lambda ()
         (if (= k 0)
             (eof-object)
             (if (pair? l)
                 (let ((v (car l)))
                   (set! k (- k 1))
                   (set! l (if (= k 0) l (lseq-cdr l)))
                   v)
                 (error "lseq-take: the lseq is shorter than the count"))))))

    (define (lseq-append . ls)
      (let ((gens (map lseq->generator ls)))
        (generator->lseq
         (lambda ()
           (let loop ()
             (if (null? gens)
                 (eof-object)
                 (let ((v ((car gens))))
                   (if (eof-object? v)
                       (begin (set! gens (cdr gens)) (loop))
                       v))))))))

    ;; The next element of each generator, or #f when one has ended.
    (define next-all %next-all)

    (define (lseq-map proc l . ls)
      (check-procedure 'lseq-map proc)
      (let ((gens (map lseq->generator (cons l ls))))
        (generator->lseq
         (lambda ()
           (let ((vs (next-all gens)))
             (if vs (apply proc vs) (eof-object)))))))

    (define (lseq-zip l . ls) (apply lseq-map list l ls))

    (define (lseq-for-each proc l . ls)
      (check-procedure 'lseq-for-each proc)
      (let ((gens (map lseq->generator (cons l ls))))
        (let loop ()
          (let ((vs (next-all gens)))
            (if vs (begin (apply proc vs) (loop)))))))

    (define (lseq-filter pred l)
      (check-procedure 'lseq-filter pred)
      (let ((gen (lseq->generator l)))
        (generator->lseq
         (lambda ()
           (let loop ()
             (let ((v (gen)))
               (if (or (eof-object? v) (pred v)) v (loop))))))))

    (define (lseq-remove pred l)
      (check-procedure 'lseq-remove pred)
      (lseq-filter (lambda (x) (not (pred x))) l))

    (define (lseq-find-tail pred l)
      (check-procedure 'lseq-find-tail pred)
      (let loop ((l l))
        (cond ((not (pair? l)) #f)
              ((pred (car l)) l)
              (else (loop (lseq-cdr l))))))

    (define (lseq-find pred l)
      (let ((tail (lseq-find-tail pred l)))
        (and tail (car tail))))

    (define (lseq-any pred l . ls)
      (check-procedure 'lseq-any pred)
      (let ((gens (map lseq->generator (cons l ls))))
        (let loop ()
          (let ((vs (next-all gens)))
            (and vs (or (apply pred vs) (loop)))))))

    (define (lseq-every pred l . ls)
      (check-procedure 'lseq-every pred)
      (let ((gens (map lseq->generator (cons l ls))))
        (let loop ((last #t))
          (let ((vs (next-all gens)))
            (if vs
                (let ((r (apply pred vs)))
                  (and r (loop r)))
                last)))))

    (define (lseq-index pred l . ls)
      (check-procedure 'lseq-index pred)
      (let ((gens (map lseq->generator (cons l ls))))
        (let loop ((i 0))
          (let ((vs (next-all gens)))
            (and vs (if (apply pred vs) i (loop (+ i 1))))))))

    (define (lseq-member x l . same)
      (let ((same? (if (pair? same) (car same) equal?)))
        (lseq-find-tail (lambda (y) (same? x y)) l)))

    (define (lseq-memq x l) (lseq-member x l eq?))
    (define (lseq-memv x l) (lseq-member x l eqv?))

    (define (lseq=? same? a b)
      (check-procedure 'lseq=? same?)
      (let loop ((a a) (b b))
        (cond ((and (null? a) (null? b)) #t)
              ((and (pair? a) (pair? b))
               (and (same? (car a) (car b)) (loop (lseq-cdr a) (lseq-cdr b))))
              (else #f))))

    (define %loaded #t)))
