;; (scheme vector), also (srfi 133): vector procedures. Those R7RS-small
;; already has (vector-map, vector-fill!, ...) are the engine's own; the
;; rest are here. Procedures over several vectors stop at the shortest.
(define-library (scheme vector)
  (export
   ;; constructors
   make-vector vector vector-unfold vector-unfold-right vector-copy
   vector-reverse-copy vector-append vector-concatenate
   vector-append-subvectors
   ;; predicates
   vector? vector-empty? vector=
   ;; selectors
   vector-ref vector-length
   ;; iteration
   vector-fold vector-fold-right vector-map vector-map! vector-for-each
   vector-count vector-cumulate
   ;; searching
   vector-index vector-index-right vector-skip vector-skip-right
   vector-binary-search vector-any vector-every vector-partition
   ;; mutators
   vector-set! vector-swap! vector-fill! vector-reverse! vector-copy!
   vector-reverse-copy! vector-unfold! vector-unfold-right!
   ;; conversion
   vector->list reverse-vector->list list->vector reverse-list->vector
   string->vector vector->string)
  (import (scheme base))
  (begin
    (define fail %expected)

    (define check-procedure %check-procedure)

    (define check-vector %check-vector)

    (define (check-vectors who vs)
      (for-each (lambda (v) (check-vector who v)) vs))

    (define range %vector-range)

    (define (shortest vs)
      (let loop ((vs vs) (n #f))
        (if (null? vs)
            (or n 0)
            (loop (cdr vs) (if n (min n (vector-length (car vs))) (vector-length (car vs)))))))

    (define (refs vs i) (map (lambda (v) (vector-ref v i)) vs))

    ;; ---- constructors ----------------------------------------------------------

    ;; Calls (f i seed ...) for i from `from` by `step`, `n` times; f
    ;; returns the element and the next seeds.
    (define (unfold-into! who f v n from step seeds)
      (check-procedure who f)
      (let loop ((k 0) (i from) (seeds seeds))
        (if (< k n)
            (call-with-values (lambda () (apply f i seeds))
              (lambda (x . next)
                (vector-set! v i x)
                (loop (+ k 1) (+ i step) next))))))

    (define (check-length who n)
      (if (not (and (exact-integer? n) (>= n 0)))
          (fail who "a non-negative exact integer" n)))

    (define (vector-unfold f n . seeds)
      (check-length 'vector-unfold n)
      (let ((v (make-vector n)))
        (unfold-into! 'vector-unfold f v n 0 1 seeds)
        v))

    (define (vector-unfold-right f n . seeds)
      (check-length 'vector-unfold-right n)
      (let ((v (make-vector n)))
        (unfold-into! 'vector-unfold-right f v n (- n 1) -1 seeds)
        v))

    (define (vector-unfold! f v start end . seeds)
      (check-vector 'vector-unfold! v)
      (let-values (((start end) (range 'vector-unfold! v (list start end))))
        (unfold-into! 'vector-unfold! f v (- end start) start 1 seeds)))

    (define (vector-unfold-right! f v start end . seeds)
      (check-vector 'vector-unfold-right! v)
      (let-values (((start end) (range 'vector-unfold-right! v (list start end))))
        (unfold-into! 'vector-unfold-right! f v (- end start) (- end 1) -1 seeds)))

    (define (vector-reverse-copy v . opt)
      (check-vector 'vector-reverse-copy v)
      (let-values (((start end) (range 'vector-reverse-copy v opt)))
        (let ((out (vector-copy v start end)))
          (vector-reverse! out)
          out)))

    (define (vector-concatenate vs)
      (if (not (list? vs)) (fail 'vector-concatenate "a list of vectors" vs))
      (check-vectors 'vector-concatenate vs)
      (apply vector-append vs))

    ;; (vector-append-subvectors [VEC START END] ...)
    (define (vector-append-subvectors . args)
      (let loop ((args args) (parts '()))
        (cond ((null? args) (apply vector-append (reverse parts)))
              ((and (pair? (cdr args)) (pair? (cddr args)))
               (check-vector 'vector-append-subvectors (car args))
               (let-values (((s e) (range 'vector-append-subvectors (car args)
                                          (list (cadr args) (caddr args)))))
                 (loop (cdddr args) (cons (vector-copy (car args) s e) parts))))
              (else (error "vector-append-subvectors: expected a vector, a start and an end"
                           args)))))

    ;; ---- predicates ------------------------------------------------------------

    (define (vector-empty? v)
      (check-vector 'vector-empty? v)
      (= 0 (vector-length v)))

    (define (vector= same? . vs)
      (check-procedure 'vector= same?)
      (check-vectors 'vector= vs)
      (or (null? vs) (null? (cdr vs))
          (let ((a (car vs)) (b (cadr vs)))
            (and (= (vector-length a) (vector-length b))
                 (let loop ((i 0))
                   (or (= i (vector-length a))
                       (and (same? (vector-ref a i) (vector-ref b i))
                            (loop (+ i 1)))))
                 (apply vector= same? (cdr vs))))))

    ;; ---- iteration -------------------------------------------------------------

    (define (vector-fold kons knil v . vs)
      (check-procedure 'vector-fold kons)
      (let ((all (cons v vs)))
        (check-vectors 'vector-fold all)
        (let ((n (shortest all)))
          (let loop ((i 0) (acc knil))
            (if (= i n)
                acc
                (loop (+ i 1) (apply kons acc (refs all i))))))))

    (define (vector-fold-right kons knil v . vs)
      (check-procedure 'vector-fold-right kons)
      (let ((all (cons v vs)))
        (check-vectors 'vector-fold-right all)
        (let loop ((i (- (shortest all) 1)) (acc knil))
          (if (< i 0)
              acc
              (loop (- i 1) (apply kons acc (refs all i)))))))

    (define (vector-map! f v . vs)
      (check-procedure 'vector-map! f)
      (let ((all (cons v vs)))
        (check-vectors 'vector-map! all)
        (let ((n (shortest all)))
          (let loop ((i 0))
            (if (< i n)
                (begin (vector-set! v i (apply f (refs all i)))
                       (loop (+ i 1))))))))

    (define (vector-count pred v . vs)
      (check-procedure 'vector-count pred)
      (let ((all (cons v vs)))
        (check-vectors 'vector-count all)
        (let ((n (shortest all)))
          (let loop ((i 0) (k 0))
            (if (= i n)
                k
                (loop (+ i 1) (if (apply pred (refs all i)) (+ k 1) k)))))))

    (define (vector-cumulate f knil v)
      (check-procedure 'vector-cumulate f)
      (check-vector 'vector-cumulate v)
      (let* ((n (vector-length v)) (out (make-vector n)))
        (let loop ((i 0) (acc knil))
          (if (= i n)
              out
              (let ((acc (f acc (vector-ref v i))))
                (vector-set! out i acc)
                (loop (+ i 1) acc))))))

    ;; ---- searching -------------------------------------------------------------

    (define (index who pred vs from-right? want)
      (check-procedure who pred)
      (check-vectors who vs)
      (if (and from-right? (pair? (cdr vs))
               (not (apply = (map vector-length vs))))
          (error (string-append (symbol->string who) ": the vectors differ in length")
                 (map vector-length vs)))
      (let ((n (shortest vs)))
        (let loop ((i (if from-right? (- n 1) 0)))
          (cond ((or (< i 0) (>= i n)) #f)
                ((eq? want (not (apply pred (refs vs i)))) (loop (if from-right? (- i 1) (+ i 1))))
                (else i)))))

    (define (vector-index pred v . vs) (index 'vector-index pred (cons v vs) #f #t))
    (define (vector-index-right pred v . vs)
      (index 'vector-index-right pred (cons v vs) #t #t))
    (define (vector-skip pred v . vs) (index 'vector-skip pred (cons v vs) #f #f))
    (define (vector-skip-right pred v . vs)
      (index 'vector-skip-right pred (cons v vs) #t #f))

    ;; (vector-binary-search VEC VALUE CMP [START END]): CMP is called as
    ;; (cmp element value) and returns a negative, zero or positive number.
    (define (vector-binary-search v value cmp . opt)
      (check-vector 'vector-binary-search v)
      (check-procedure 'vector-binary-search cmp)
      (let-values (((start end) (range 'vector-binary-search v opt)))
        (let loop ((lo start) (hi end))
          (if (>= lo hi)
              #f
              (let* ((mid (quotient (+ lo hi) 2))
                     (c (cmp (vector-ref v mid) value)))
                (cond ((not (exact-integer? c))
                       (fail 'vector-binary-search "an exact integer from the comparison" c))
                      ((zero? c) mid)
                      ((negative? c) (loop (+ mid 1) hi))
                      (else (loop lo mid))))))))

    (define (vector-any pred v . vs)
      (check-procedure 'vector-any pred)
      (let ((all (cons v vs)))
        (check-vectors 'vector-any all)
        (let ((n (shortest all)))
          (let loop ((i 0))
            (and (< i n)
                 (or (apply pred (refs all i)) (loop (+ i 1))))))))

    (define (vector-every pred v . vs)
      (check-procedure 'vector-every pred)
      (let ((all (cons v vs)))
        (check-vectors 'vector-every all)
        (let ((n (shortest all)))
          (let loop ((i 0) (last #t))
            (if (= i n)
                last
                (let ((r (apply pred (refs all i))))
                  (and r (loop (+ i 1) r))))))))

    ;; A new vector with the elements that satisfy pred first, and their count.
    (define (vector-partition pred v)
      (check-procedure 'vector-partition pred)
      (check-vector 'vector-partition v)
      (let loop ((i 0) (yes '()) (no '()) (k 0))
        (if (= i (vector-length v))
            (values (list->vector (append (reverse yes) (reverse no))) k)
            (let ((x (vector-ref v i)))
              (if (pred x)
                  (loop (+ i 1) (cons x yes) no (+ k 1))
                  (loop (+ i 1) yes (cons x no) k))))))

    ;; ---- mutators --------------------------------------------------------------

    (define (vector-swap! v i j)
      (check-vector 'vector-swap! v)
      (let ((x (vector-ref v i)))
        (vector-set! v i (vector-ref v j))
        (vector-set! v j x)))

    (define (vector-reverse! v . opt)
      (check-vector 'vector-reverse! v)
      (let-values (((start end) (range 'vector-reverse! v opt)))
        (let loop ((i start) (j (- end 1)))
          (if (< i j)
              (begin (vector-swap! v i j) (loop (+ i 1) (- j 1)))))))

    (define (vector-reverse-copy! to at from . opt)
      (check-vector 'vector-reverse-copy! to)
      (check-vector 'vector-reverse-copy! from)
      (let-values (((start end) (range 'vector-reverse-copy! from opt)))
        (vector-copy! to at from start end)
        (vector-reverse! to at (+ at (- end start)))))

    ;; ---- conversion ------------------------------------------------------------

    (define (reverse-vector->list v . opt)
      (check-vector 'reverse-vector->list v)
      (let-values (((start end) (range 'reverse-vector->list v opt)))
        (let loop ((i start) (acc '()))
          (if (= i end) acc (loop (+ i 1) (cons (vector-ref v i) acc))))))

    (define (reverse-list->vector l)
      (if (not (list? l)) (fail 'reverse-list->vector "a proper list" l))
      (list->vector (reverse l)))

    (define %loaded #t)))
