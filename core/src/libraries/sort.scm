;; (scheme sort), also (srfi 132): sorting lists and vectors. Every sort
;; is stable. When the order is one of the engine's own procedures (< >
;; string<? string>? string-ci<? string-ci>? char<? char>? char-ci<?
;; char-ci>?) and every element is of its type (fixnums, or flonums, for <
;; and >), the sort runs natively (`%sort!`); otherwise a native bottom-up
;; merge sort runs in steps, and this library calls the order between
;; them (a primitive never calls back into Scheme). A list is sorted as a
;; vector.
(define-library (scheme sort)
  (export
   list-sorted? vector-sorted?
   list-sort list-stable-sort list-sort! list-stable-sort!
   vector-sort vector-stable-sort vector-sort! vector-stable-sort!
   list-merge list-merge! vector-merge vector-merge!
   list-delete-neighbor-dups list-delete-neighbor-dups!
   vector-delete-neighbor-dups vector-delete-neighbor-dups!
   vector-find-median vector-find-median! vector-select! vector-separate!)
  (import (scheme base))
  (begin
    (define check-procedure %check-procedure)

    (define check-list %check-list)

    (define check-vector %check-vector)

    (define range %vector-range)

    ;; The native code of an order the engine sorts itself, or #f.
    (define (native-order less)
      (cond ((eq? less <) 0) ((eq? less >) 1)
            ((eq? less string<?) 2) ((eq? less string>?) 3)
            ((eq? less string-ci<?) 4) ((eq? less string-ci>?) 5)
            ((eq? less char<?) 6) ((eq? less char>?) 7)
            ((eq? less char-ci<?) 8) ((eq? less char-ci>?) 9)
            (else #f)))

    ;; ---- merging and sorting lists -------------------------------------------

    ;; Merges sorted lists a and b; on ties, a's element comes first.
    (define (merge-lists less a b)
      (cond ((null? a) b)
            ((null? b) a)
            (else
             (let ((head (list #f)))
               (let loop ((tail head) (a a) (b b))
                 (cond ((null? a) (set-cdr! tail b))
                       ((null? b) (set-cdr! tail a))
                       ((less (car b) (car a))
                        (let ((cell (list (car b))))
                          (set-cdr! tail cell)
                          (loop cell a (cdr b))))
                       (else
                        (let ((cell (list (car a))))
                          (set-cdr! tail cell)
                          (loop cell (cdr a) b)))))
               (cdr head)))))

    (define (sort-list who less l)
      (check-procedure who less)
      (check-list who l)
      (if (or (null? l) (null? (cdr l)))
          l
          (let ((v (list->vector l)))
            (sort-range! who less v 0 (vector-length v))
            (vector->list v))))

    (define (list-sort less l) (sort-list 'list-sort less l))
    (define (list-stable-sort less l) (sort-list 'list-stable-sort less l))
    (define (list-sort! less l) (sort-list 'list-sort! less l))
    (define (list-stable-sort! less l) (sort-list 'list-stable-sort! less l))

    (define (list-merge less a b)
      (check-procedure 'list-merge less)
      (check-list 'list-merge a)
      (check-list 'list-merge b)
      (merge-lists less a b))

    (define (list-merge! less a b)
      (check-procedure 'list-merge! less)
      (check-list 'list-merge! a)
      (check-list 'list-merge! b)
      (merge-lists less a b))

    (define (list-sorted? less l)
      (check-procedure 'list-sorted? less)
      (check-list 'list-sorted? l)
      (or (null? l)
          (let loop ((prev (car l)) (l (cdr l)))
            (or (null? l)
                (and (not (less (car l) prev))
                     (loop (car l) (cdr l)))))))

    ;; ---- vectors ---------------------------------------------------------------

    ;; Sorts v[start, end) in place, stably: natively for the engine's own
    ;; orders, else by the native merge sort's steps (`%merge-sort-step!`),
    ;; calling the order between them.
    (define (sort-range! who less v start end)
      (let ((code (native-order less)))
        (if (not (and code (%sort! v start end code)))
            (let ((state (%merge-sort-start v start end)))
              (let loop ((done (%merge-sort-step! state #f)))
                (if done
                    (vector-copy! v start (vector-ref state 2))
                    (loop (%merge-sort-step! state
                                             (less (vector-ref state 0)
                                                   (vector-ref state 1))))))))))

    (define (sort-vector who less v opt)
      (check-procedure who less)
      (check-vector who v)
      (let-values (((start end) (range who v opt)))
        (let ((copy (vector-copy v start end)))
          (sort-range! who less copy 0 (- end start))
          copy)))

    (define (sort-vector! who less v opt)
      (check-procedure who less)
      (check-vector who v)
      (let-values (((start end) (range who v opt)))
        (sort-range! who less v start end)))

    (define (vector-sort less v . opt) (sort-vector 'vector-sort less v opt))
    (define (vector-stable-sort less v . opt)
      (sort-vector 'vector-stable-sort less v opt))
    (define (vector-sort! less v . opt) (sort-vector! 'vector-sort! less v opt))
    (define (vector-stable-sort! less v . opt)
      (sort-vector! 'vector-stable-sort! less v opt))

    (define (vector-sorted? less v . opt)
      (check-procedure 'vector-sorted? less)
      (check-vector 'vector-sorted? v)
      (let-values (((start end) (range 'vector-sorted? v opt)))
        (let loop ((i (+ start 1)))
          (or (>= i end)
              (and (not (less (vector-ref v i) (vector-ref v (- i 1))))
                   (loop (+ i 1)))))))

    ;; (vector-merge < V1 V2 [START1 [END1 [START2 [END2]]]])
    (define (vector-merge less v1 v2 . opt)
      (check-procedure 'vector-merge less)
      (check-vector 'vector-merge v1)
      (check-vector 'vector-merge v2)
      (let*-values (((s1 e1) (range 'vector-merge v1 opt))
                    ((s2 e2) (range 'vector-merge v2
                                    (if (and (pair? opt) (pair? (cdr opt)))
                                        (cddr opt)
                                        '()))))
        (list->vector (merge-lists less (vector->list v1 s1 e1)
                                   (vector->list v2 s2 e2)))))

    ;; (vector-merge! < TO FROM1 FROM2 [START [START1 [END1 [START2 [END2]]]]])
    (define (vector-merge! less to v1 v2 . opt)
      (check-procedure 'vector-merge! less)
      (check-vector 'vector-merge! to)
      (check-vector 'vector-merge! v1)
      (check-vector 'vector-merge! v2)
      (let* ((start (if (pair? opt) (car opt) 0))
             (rest (if (pair? opt) (cdr opt) '())))
        (let*-values (((s1 e1) (range 'vector-merge! v1 rest))
                      ((s2 e2) (range 'vector-merge! v2
                                      (if (and (pair? rest) (pair? (cdr rest)))
                                          (cddr rest)
                                          '()))))
          (let ((merged (merge-lists less (vector->list v1 s1 e1)
                                     (vector->list v2 s2 e2))))
            (if (not (and (exact-integer? start) (>= start 0)
                          (<= (+ start (length merged)) (vector-length to))))
                (error "vector-merge!: the result does not fit in the target vector"
                       start))
            (let loop ((i start) (l merged))
              (if (pair? l)
                  (begin (vector-set! to i (car l))
                         (loop (+ i 1) (cdr l)))))))))

    ;; ---- deleting neighbouring duplicates ------------------------------------

    (define (dedup same? l)
      (if (null? l)
          '()
          (let loop ((prev (car l)) (l (cdr l)) (acc (list (car l))))
            (cond ((null? l) (reverse acc))
                  ((same? prev (car l)) (loop prev (cdr l) acc))
                  (else (loop (car l) (cdr l) (cons (car l) acc)))))))

    (define (list-delete-neighbor-dups same? l)
      (check-procedure 'list-delete-neighbor-dups same?)
      (check-list 'list-delete-neighbor-dups l)
      (dedup same? l))

    (define (list-delete-neighbor-dups! same? l)
      (check-procedure 'list-delete-neighbor-dups! same?)
      (check-list 'list-delete-neighbor-dups! l)
      (dedup same? l))

    (define (vector-delete-neighbor-dups same? v . opt)
      (check-procedure 'vector-delete-neighbor-dups same?)
      (check-vector 'vector-delete-neighbor-dups v)
      (let-values (((start end) (range 'vector-delete-neighbor-dups v opt)))
        (list->vector (dedup same? (vector->list v start end)))))

    ;; Leaves the result in v from START on; returns where it ends.
    (define (vector-delete-neighbor-dups! same? v . opt)
      (check-procedure 'vector-delete-neighbor-dups! same?)
      (check-vector 'vector-delete-neighbor-dups! v)
      (let-values (((start end) (range 'vector-delete-neighbor-dups! v opt)))
        (let loop ((i start) (l (dedup same? (vector->list v start end))))
          (if (null? l)
              i
              (begin (vector-set! v i (car l))
                     (loop (+ i 1) (cdr l)))))))

    ;; ---- selection -----------------------------------------------------------

    (define (median who less v knil mean)
      (let ((n (vector-length v)))
        (cond ((= n 0) knil)
              ((odd? n) (vector-ref v (quotient n 2)))
              (else (mean (vector-ref v (- (quotient n 2) 1))
                          (vector-ref v (quotient n 2)))))))

    (define (default-mean a b) (/ (+ a b) 2))

    ;; (vector-find-median < V KNIL [MEAN])
    (define (vector-find-median less v knil . mean)
      (check-procedure 'vector-find-median less)
      (check-vector 'vector-find-median v)
      (let ((sorted (vector-copy v)))
        (sort-range! 'vector-find-median less sorted 0 (vector-length sorted))
        (median 'vector-find-median less sorted knil
                (if (pair? mean) (car mean) default-mean))))

    ;; The same, leaving V sorted.
    (define (vector-find-median! less v knil . mean)
      (check-procedure 'vector-find-median! less)
      (check-vector 'vector-find-median! v)
      (sort-range! 'vector-find-median! less v 0 (vector-length v))
      (median 'vector-find-median! less v knil
              (if (pair? mean) (car mean) default-mean)))

    (define (check-k who k start end)
      (if (not (and (exact-integer? k) (<= 0 k) (< k (- end start))))
          (error (string-append (symbol->string who)
                                ": k is out of the range's bounds")
                 k)))

    ;; (vector-select! < V K [START [END]]): the element of rank K (from 0)
    ;; in v[start, end), which is left sorted.
    (define (vector-select! less v k . opt)
      (check-procedure 'vector-select! less)
      (check-vector 'vector-select! v)
      (let-values (((start end) (range 'vector-select! v opt)))
        (check-k 'vector-select! k start end)
        (sort-range! 'vector-select! less v start end)
        (vector-ref v (+ start k))))

    ;; (vector-separate! < V K [START [END]]): the K smallest elements of
    ;; v[start, end) first (here: the range sorted).
    (define (vector-separate! less v k . opt)
      (check-procedure 'vector-separate! less)
      (check-vector 'vector-separate! v)
      (let-values (((start end) (range 'vector-separate! v opt)))
        (if (not (and (exact-integer? k) (<= 0 k (- end start))))
            (error "vector-separate!: k is out of the range's bounds" k))
        (sort-range! 'vector-separate! less v start end)))

    (define %loaded #t)))
