;; (scheme generator), also (srfi 158) and, for the generator part, (srfi
;; 121): generators (procedures of no arguments that return the next value,
;; then an end-of-file object for good) and accumulators (procedures of one
;; argument that take values until given an end-of-file object, then return
;; the result).
(define-library (scheme generator)
  (export
   generator circular-generator make-iota-generator make-range-generator
   make-coroutine-generator list->generator vector->generator
   reverse-vector->generator string->generator bytevector->generator
   make-for-each-generator make-unfold-generator
   gcons* gappend gflatten ggroup gmerge gmap gcombine gfilter gremove
   gstate-filter gtake gdrop gtake-while gdrop-while gdelete
   gdelete-neighbor-dups gindex gselect
   generator->list generator->reverse-list generator->vector
   generator->vector! generator->string generator-fold generator-for-each
   generator-map->list generator-find generator-count generator-any
   generator-every generator-unfold
   make-accumulator count-accumulator list-accumulator
   reverse-list-accumulator vector-accumulator reverse-vector-accumulator
   vector-accumulator! string-accumulator bytevector-accumulator
   bytevector-accumulator! sum-accumulator product-accumulator)
  (import (scheme base) (scheme case-lambda))
  (begin
    (define eof (eof-object))

    (define fail %expected)

    (define check-procedure %check-procedure)

    (define check-count %check-count)

    ;; ---- generators from values ------------------------------------------------

    (define (generator . items) (list->generator items))

    (define (circular-generator . items)
      (if (null? items) (error "circular-generator: expected at least one value"))
      (let ((rest items))
        (lambda ()
          (if (null? rest) (set! rest items))
          (let ((v (car rest)))
            (set! rest (cdr rest))
            v))))

    (define make-iota-generator
      (case-lambda
        ((count) (make-iota-generator count 0 1))
        ((count start) (make-iota-generator count start 1))
        ((count start step)
         (check-count 'make-iota-generator count)
         (let ((i 0))
           (lambda ()
             (if (>= i count)
                 eof
                 (let ((v (+ start (* i step))))
                   (set! i (+ i 1))
                   ;; exact start and step give exact values
                   (if (and (exact? start) (exact? step)) v (inexact v)))))))))

    (define make-range-generator
      (case-lambda
        ((start) (make-range-generator start +inf.0 1))
        ((start end) (make-range-generator start end 1))
        ((start end step)
         (let ((i 0))
           (lambda ()
             (let ((v (+ start (* i step))))
               (if (if (negative? step) (<= v end) (>= v end))
                   eof
                   (begin (set! i (+ i 1)) v))))))))

    ;; (make-coroutine-generator proc): proc is called with a yield
    ;; procedure; each value it yields is the generator's next one.
    (define (make-coroutine-generator proc)
      (check-procedure 'make-coroutine-generator proc)
      (coroutine proc))

    (define (coroutine proc)
      (define return #f)
      (define resume #f)
      (define (yield v)
        (call/cc (lambda (k) (set! resume k) (return v))))
      (lambda ()
        (call/cc
         (lambda (r)
           (set! return r)
           (if resume
               (resume #f)
               (begin (proc yield)
                      (set! resume (lambda (v) (return eof)))
                      (return eof)))))))

    (define (list->generator l)
      (if (not (list? l)) (fail 'list->generator "a list" l))
      (lambda ()
        (if (null? l)
            eof
            (let ((v (car l)))
              (set! l (cdr l))
              v))))

    (define (range-args who len opt)
      (let ((start (if (pair? opt) (car opt) 0))
            (end (if (and (pair? opt) (pair? (cdr opt))) (cadr opt) len)))
        (if (not (and (exact-integer? start) (exact-integer? end) (<= 0 start end len)))
            (error (string-append (symbol->string who)
                                  ": start and end are out of range for length "
                                  (number->string len))
                   start end))
        (values start end)))

    (define (indexed who len ref obj opt)
      (let-values (((start end) (range-args who len opt)))
        (let ((i start))
          (lambda ()
            (if (>= i end)
                eof
                (let ((v (ref obj i)))
                  (set! i (+ i 1))
                  v))))))

    (define (vector->generator v . opt)
      (if (not (vector? v)) (fail 'vector->generator "a vector" v))
      (indexed 'vector->generator (vector-length v) vector-ref v opt))

    (define (reverse-vector->generator v . opt)
      (if (not (vector? v)) (fail 'reverse-vector->generator "a vector" v))
      (let-values (((start end) (range-args 'reverse-vector->generator (vector-length v) opt)))
        (let ((i end))
          (lambda ()
            (if (<= i start)
                eof
                (begin (set! i (- i 1)) (vector-ref v i)))))))

    (define (string->generator s . opt)
      (if (not (string? s)) (fail 'string->generator "a string" s))
      (indexed 'string->generator (string-length s) string-ref s opt))

    (define (bytevector->generator b . opt)
      (if (not (bytevector? b)) (fail 'bytevector->generator "a bytevector" b))
      (indexed 'bytevector->generator (bytevector-length b) bytevector-u8-ref b opt))

    ;; (make-for-each-generator for-each obj): the values for-each would
    ;; pass its procedure.
    (define (make-for-each-generator for-each obj)
      (check-procedure 'make-for-each-generator for-each)
      (make-coroutine-generator
       (lambda (yield) (for-each yield obj))))

    (define (make-unfold-generator stop? mapper successor seed)
      (check-procedure 'make-unfold-generator stop?)
      (check-procedure 'make-unfold-generator mapper)
      (check-procedure 'make-unfold-generator successor)
      (lambda ()
        (if (stop? seed)
            eof
            (let ((v (mapper seed)))
              (set! seed (successor seed))
              v))))

    ;; ---- generators from generators -------------------------------------------------

    ;; (gcons* item ... gen)
    (define (gcons* . args)
      (if (null? args) (error "gcons*: expected a generator"))
      (let loop ((items '()) (args args))
        (if (null? (cdr args))
            (let ((items (reverse items)) (gen (car args)))
              (lambda ()
                (if (null? items)
                    (gen)
                    (let ((v (car items)))
                      (set! items (cdr items))
                      v))))
            (loop (cons (car args) items) (cdr args)))))

    (define (gappend . gens)
      (lambda ()
        (let loop ()
          (if (null? gens)
              eof
              (let ((v ((car gens))))
                (if (eof-object? v)
                    (begin (set! gens (cdr gens)) (loop))
                    v))))))

    (define (gflatten gen)
      (let ((items '()))
        (lambda ()
          (let loop ()
            (if (pair? items)
                (let ((v (car items)))
                  (set! items (cdr items))
                  v)
                (let ((l (gen)))
                  (if (eof-object? l)
                      eof
                      (begin (set! items l) (loop)))))))))

    ;; (ggroup gen k [padding]): lists of k values; the last is padded when
    ;; padding is given, else shorter.
    (define (ggroup gen k . padding)
      (check-count 'ggroup k)
      (lambda ()
        (let loop ((i 0) (acc '()))
          (if (= i k)
              (reverse acc)
              (let ((v (gen)))
                (cond ((not (eof-object? v)) (loop (+ i 1) (cons v acc)))
                      ((null? acc) eof)
                      ((pair? padding)
                       (append (reverse acc) (make-list (- k i) (car padding))))
                      (else (reverse acc))))))))

    ;; (gmerge <? gen ...): the values of generators each in order, merged.
    (define (gmerge less . gens)
      (check-procedure 'gmerge less)
      ;; each generator's next value, read on the first call
      (let ((heads #f))
        (lambda ()
          (if (not heads) (set! heads (map (lambda (g) (g)) gens)))
          (let loop ((hs heads) (gs gens) (best #f) (best-g #f) (best-cell #f))
            (if (null? hs)
                (if best-cell
                    (let ((v (car best-cell)))
                      (set-car! best-cell (best-g))
                      v)
                    eof)
                (if (and (not (eof-object? (car hs)))
                         (or (not best-cell) (less (car hs) best)))
                    (loop (cdr hs) (cdr gs) (car hs) (car gs) hs)
                    (loop (cdr hs) (cdr gs) best best-g best-cell)))))))

    ;; The next value of each generator, or #f when one has ended.
    (define next-all %next-all)

    (define (gmap proc gen . gens)
      (check-procedure 'gmap proc)
      (let ((gens (cons gen gens)))
        (lambda ()
          (let ((vs (next-all gens)))
            (if vs (apply proc vs) eof)))))

    ;; (gcombine proc seed gen ...): proc takes a value of each generator
    ;; and the seed and returns a value and the next seed.
    (define (gcombine proc seed gen . gens)
      (check-procedure 'gcombine proc)
      (let ((gens (cons gen gens)))
        (lambda ()
          (let ((vs (next-all gens)))
            (if vs
                (let-values (((v next) (apply proc (append vs (list seed)))))
                  (set! seed next)
                  v)
                eof)))))

    (define (gfilter pred gen)
      (check-procedure 'gfilter pred)
      (lambda ()
        (let loop ()
          (let ((v (gen)))
            (if (or (eof-object? v) (pred v)) v (loop))))))

    (define (gremove pred gen)
      (check-procedure 'gremove pred)
      (gfilter (lambda (v) (not (pred v))) gen))

    ;; (gstate-filter proc seed gen): proc takes a value and the state and
    ;; returns whether to keep it and the next state.
    (define (gstate-filter proc seed gen)
      (check-procedure 'gstate-filter proc)
      (lambda ()
        (let loop ()
          (let ((v (gen)))
            (if (eof-object? v)
                v
                (let-values (((keep next) (proc v seed)))
                  (set! seed next)
                  (if keep v (loop))))))))

    ;; (gtake gen k [padding])
    (define (gtake gen k . padding)
      (check-count 'gtake k)
      (let ((i 0))
        (lambda ()
          (if (>= i k)
              eof
              (let ((v (gen)))
                (set! i (+ i 1))
                (if (and (eof-object? v) (pair? padding)) (car padding) v))))))

    (define (gdrop gen k)
      (check-count 'gdrop k)
      (lambda ()
        (let loop ()
          (if (> k 0)
              (begin (set! k (- k 1)) (gen) (loop))
              (gen)))))

    (define (gtake-while pred gen)
      (check-procedure 'gtake-while pred)
      (let ((done #f))
        (lambda ()
          (if done
              eof
              (let ((v (gen)))
                (if (or (eof-object? v) (not (pred v)))
                    (begin (set! done #t) eof)
                    v))))))

    (define (gdrop-while pred gen)
      (check-procedure 'gdrop-while pred)
      (let ((dropping #t))
        (lambda ()
          (if dropping
              (let loop ()
                (let ((v (gen)))
                  (if (and (not (eof-object? v)) (pred v))
                      (loop)
                      (begin (set! dropping #f) v))))
              (gen)))))

    (define (gdelete item gen . same)
      (let ((same? (if (pair? same) (car same) equal?)))
        (gfilter (lambda (v) (not (same? item v))) gen)))

    (define (gdelete-neighbor-dups gen . same)
      (let ((same? (if (pair? same) (car same) equal?))
            (first #t)
            (prev #f))
        (lambda ()
          (let loop ()
            (let ((v (gen)))
              (cond ((eof-object? v) v)
                    ((and (not first) (same? prev v)) (loop))
                    (else (set! first #f) (set! prev v) v)))))))

    ;; (gindex value-gen index-gen): the values at the (increasing) indexes.
    (define (gindex value-gen index-gen)
      (let ((at 0))
        (lambda ()
          (let ((i (index-gen)))
            (if (eof-object? i)
                i
                (let loop ()
                  (let ((v (value-gen)))
                    (cond ((eof-object? v) v)
                          ((= at i) (set! at (+ at 1)) v)
                          (else (set! at (+ at 1)) (loop))))))))))

    (define (gselect value-gen truth-gen)
      (lambda ()
        (let loop ()
          (let ((v (value-gen)) (t (truth-gen)))
            (cond ((or (eof-object? v) (eof-object? t)) eof)
                  (t v)
                  (else (loop)))))))

    ;; ---- consuming generators -----------------------------------------------------

    ;; The values of gen, at most n of them (all without n), reversed.
    (define (take-reversed gen n)
      (let loop ((i 0) (acc '()))
        (if (and n (>= i n))
            acc
            (let ((v (gen)))
              (if (eof-object? v) acc (loop (+ i 1) (cons v acc)))))))

    (define (limit who opt)
      (and (pair? opt) (begin (check-count who (car opt)) (car opt))))

    (define (generator->list gen . n)
      (%check-procedure 'generator->list gen)
      (reverse (take-reversed gen (limit 'generator->list n))))

    (define (generator->reverse-list gen . n)
      (%check-procedure 'generator->reverse-list gen)
      (take-reversed gen (limit 'generator->reverse-list n)))

    (define (generator->vector gen . n)
      (%check-procedure 'generator->vector gen)
      (list->vector (reverse (take-reversed gen (limit 'generator->vector n)))))

    ;; (generator->vector! vector at gen): fills vector from at on; returns
    ;; how many values it wrote.
    (define (generator->vector! v at gen)
      (if (not (vector? v)) (fail 'generator->vector! "a vector" v))
      (if (not (and (exact-integer? at) (<= 0 at (vector-length v))))
          (fail 'generator->vector! "an index within the vector" at))
      (let loop ((i at))
        (if (>= i (vector-length v))
            (- i at)
            (let ((x (gen)))
              (if (eof-object? x)
                  (- i at)
                  (begin (vector-set! v i x) (loop (+ i 1))))))))

    (define (generator->string gen . n)
      (%check-procedure 'generator->string gen)
      (list->string (reverse (take-reversed gen (limit 'generator->string n)))))

    (define (generator-fold proc seed gen . gens)
      (check-procedure 'generator-fold proc)
      (let ((gens (cons gen gens)))
        (let loop ((seed seed))
          (let ((vs (next-all gens)))
            (if vs (loop (apply proc (append vs (list seed)))) seed)))))

    (define (generator-for-each proc gen . gens)
      (check-procedure 'generator-for-each proc)
      (let ((gens (cons gen gens)))
        (let loop ()
          (let ((vs (next-all gens)))
            (if vs (begin (apply proc vs) (loop)))))))

    (define (generator-map->list proc gen . gens)
      (check-procedure 'generator-map->list proc)
      (let ((gens (cons gen gens)))
        (let loop ((acc '()))
          (let ((vs (next-all gens)))
            (if vs (loop (cons (apply proc vs) acc)) (reverse acc))))))

    (define (generator-find pred gen)
      (check-procedure 'generator-find pred)
      (let loop ()
        (let ((v (gen)))
          (cond ((eof-object? v) #f)
                ((pred v) v)
                (else (loop))))))

    (define (generator-count pred gen)
      (check-procedure 'generator-count pred)
      (let loop ((n 0))
        (let ((v (gen)))
          (if (eof-object? v) n (loop (if (pred v) (+ n 1) n))))))

    (define (generator-any pred gen)
      (check-procedure 'generator-any pred)
      (let loop ()
        (let ((v (gen)))
          (if (eof-object? v) #f (or (pred v) (loop))))))

    (define (generator-every pred gen)
      (check-procedure 'generator-every pred)
      (let loop ((last #t))
        (let ((v (gen)))
          (if (eof-object? v)
              last
              (let ((r (pred v)))
                (and r (loop r)))))))

    ;; (generator-unfold gen unfold arg ...): unfold (say string-unfold)
    ;; over the generator's values.
    (define (generator-unfold gen unfold . args)
      (check-procedure 'generator-unfold unfold)
      (apply unfold eof-object? (lambda (x) x) (lambda (x) (gen)) (gen) args))

    ;; ---- accumulators ----------------------------------------------------------

    (define (make-accumulator kons knil finalizer)
      (check-procedure 'make-accumulator kons)
      (check-procedure 'make-accumulator finalizer)
      (let ((state knil))
        (lambda (v)
          (if (eof-object? v)
              (finalizer state)
              (set! state (kons v state))))))

    (define (count-accumulator)
      (make-accumulator (lambda (v n) (+ n 1)) 0 (lambda (n) n)))

    (define (list-accumulator) (make-accumulator cons '() reverse))

    (define (reverse-list-accumulator) (make-accumulator cons '() (lambda (l) l)))

    (define (vector-accumulator)
      (make-accumulator cons '() (lambda (l) (list->vector (reverse l)))))

    (define (reverse-vector-accumulator) (make-accumulator cons '() list->vector))

    ;; An accumulator that stores each value into seq from at on, for
    ;; `who`: seq is a `kind` (`is?` says which), `size` its length, `put!`
    ;; what stores into it.
    (define (accumulator-into who kind is? size put! seq at)
      (if (not (is? seq)) (fail who (string-append "a " kind) seq))
      (lambda (x)
        (if (eof-object? x)
            seq
            (begin
              (if (not (< -1 at (size seq)))
                  (error (string-append (symbol->string who) ": no room left in the " kind)
                         at))
              (put! seq at x)
              (set! at (+ at 1))))))

    ;; (vector-accumulator! vector at): stores each value from at on.
    (define (vector-accumulator! v at)
      (accumulator-into 'vector-accumulator! "vector" vector? vector-length vector-set! v at))

    (define (string-accumulator)
      (make-accumulator cons '() (lambda (l) (list->string (reverse l)))))

    (define (bytevector-accumulator)
      (make-accumulator cons '() (lambda (l) (apply bytevector (reverse l)))))

    (define (bytevector-accumulator! b at)
      (accumulator-into 'bytevector-accumulator! "bytevector" bytevector? bytevector-length
                        bytevector-u8-set! b at))

    (define (sum-accumulator) (make-accumulator + 0 (lambda (x) x)))

    (define (product-accumulator) (make-accumulator * 1 (lambda (x) x)))

    (define %loaded #t)))
