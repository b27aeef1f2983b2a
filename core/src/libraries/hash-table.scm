;; (scheme hash-table), also (srfi 125) and (srfi 69): hash tables. The
;; tables are the engine's own objects (the `%ht-` primitives,
;; core/src/builtins/hashtables.rs), which hash and compare keys natively
;; for the equivalences eq?, eqv?, equal?, string=? and string-ci=? (and
;; char=?, symbol=?, which those cover). For any other equivalence the
;; program gives a hash function: this library calls it and the
;; equivalence, and stores the key under the hash it returned.
;; SRFI 125 and the SRFI 69 names it keeps (deprecated there) are all
;; here; where the two differ the SRFI 125 meaning wins, and SRFI 69's
;; argument orders are accepted too (`hash-table-fold` TABLE first,
;; `hash-table-walk`). Comparators (SRFI 128) are accepted wherever an
;; equivalence is.
(define-library (scheme hash-table)
  (export
   ;; constructors
   make-hash-table hash-table hash-table-unfold alist->hash-table
   ;; predicates
   hash-table? hash-table-contains? hash-table-exists? hash-table-empty?
   hash-table=? hash-table-mutable?
   ;; accessors
   hash-table-ref hash-table-ref/default
   ;; mutators
   hash-table-set! hash-table-delete! hash-table-intern! hash-table-update!
   hash-table-update!/default hash-table-pop! hash-table-clear!
   ;; the whole table
   hash-table-size hash-table-keys hash-table-values hash-table-entries
   hash-table-find hash-table-count
   ;; mapping and folding
   hash-table-map hash-table-for-each hash-table-walk hash-table-map!
   hash-table-map->list hash-table-fold hash-table-prune!
   ;; copying and conversion
   hash-table-copy hash-table-empty-copy hash-table->alist
   ;; hash tables as sets
   hash-table-union! hash-table-intersection! hash-table-difference!
   hash-table-xor! hash-table-merge!
   ;; hash functions and reflection (SRFI 69)
   hash string-hash string-ci-hash hash-by-identity
   hash-table-equivalence-function hash-table-hash-function)
  (import (scheme base) (scheme char) (scheme comparator))
  (begin
    (define fail %expected)

    (define check-procedure %check-procedure)

    (define (check-table who t)
      (if (not (%hash-table? t)) (fail who "a hash table" t)))

    ;; ---- hash functions ------------------------------------------------------

    (define bounded %hash-bounded)

    (define (hash obj . bound) (bounded 'hash (%hash 'hash 2 obj) bound))
    (define (hash-by-identity obj . bound)
      (bounded 'hash-by-identity (%hash 'hash-by-identity 0 obj) bound))
    ;; string-hash and string-ci-hash are (scheme comparator)'s.

    ;; ---- making tables -------------------------------------------------------

    ;; The native kind for an equivalence: 0 eq?, 1 eqv?, 2 equal?,
    ;; 3 string=?, 4 string-ci=?, 5 the program's own.
    (define (kind-of equiv)
      (cond ((eq? equiv equal?) 2)
            ((eq? equiv eqv?) 1)
            ((eq? equiv eq?) 0)
            ((eq? equiv string=?) 3)
            ((eq? equiv string-ci=?) 4)
            ((eq? equiv char=?) 1)
            ((eq? equiv symbol=?) 0)
            (else 5)))

    ;; A new table from an equivalence or a comparator, an optional hash
    ;; function and the implementation's arguments (an exact integer is
    ;; the initial capacity; others are ignored, as SRFI 125 allows).
    (define (new-table who args)
      (let*-values
          (((equiv hashf rest)
            (cond ((null? args) (values equal? hash '()))
                  ((comparator? (car args))
                   (let ((c (car args)))
                     (values (comparator-equality-predicate c)
                             (and (comparator-hashable? c)
                                  (comparator-hash-function c))
                             (cdr args))))
                  ((procedure? (car args))
                   (if (and (pair? (cdr args)) (procedure? (cadr args)))
                       (values (car args) (cadr args) (cddr args))
                       (values (car args) #f (cdr args))))
                  (else (fail who "an equivalence procedure or a comparator"
                              (car args)))))
           ((kind) (kind-of equiv))
           ((capacity)
            (let loop ((r rest))
              (cond ((null? r) 0)
                    ((and (exact-integer? (car r)) (>= (car r) 0)) (car r))
                    (else (loop (cdr r)))))))
        (if (and (= kind 5) (not hashf))
            (error (string-append (symbol->string who)
                                  ": a hash function is needed for this equivalence")
                   equiv))
        (%make-hash-table kind equiv (or hashf (kind-hash kind)) capacity)))

    (define (kind-hash kind)
      (case kind
        ((0) hash-by-identity)
        ((3) string-hash)
        ((4) string-ci-hash)
        (else hash)))

    (define (make-hash-table . args) (new-table 'make-hash-table args))

    (define (hash-table comparator . kvs)
      (let ((t (new-table 'hash-table (list comparator))))
        (let loop ((l kvs))
          (cond ((null? l) (%ht-freeze t))
                ((null? (cdr l))
                 (error "hash-table: a key without a value" (car l)))
                (else (put! 'hash-table t (car l) (cadr l))
                      (loop (cddr l)))))))

    (define (hash-table-unfold stop? mapper successor seed . args)
      (check-procedure 'hash-table-unfold stop?)
      (check-procedure 'hash-table-unfold mapper)
      (check-procedure 'hash-table-unfold successor)
      (let ((t (new-table 'hash-table-unfold args)))
        (let loop ((s seed))
          (if (stop? s)
              t
              (let-values (((k v) (mapper s)))
                (put! 'hash-table-unfold t k v)
                (loop (successor s)))))))

    ;; Earlier associations win, as in an alist.
    (define (alist->hash-table alist . args)
      (let ((t (new-table 'alist->hash-table args)))
        (let loop ((l alist))
          (cond ((null? l) t)
                ((and (pair? l) (pair? (car l)))
                 (if (not (has? 'alist->hash-table t (caar l)))
                     (put! 'alist->hash-table t (caar l) (cdar l)))
                 (loop (cdr l)))
                (else (fail 'alist->hash-table "an association list" alist))))))

    ;; ---- one key -------------------------------------------------------------
    ;; A native table does it all in one primitive; a custom one calls the
    ;; program's hash function and equivalence first.

    (define missing (list 'missing))

    ;; The hash of `key` in custom table `t` and the candidate list whose
    ;; car is the stored key equivalent to it (or #f).
    (define (locate who t key)
      (let ((h ((%ht-hash-function who t) key))
            (same? (%ht-equiv who t)))
        (let loop ((cs (%ht-candidates who t h)))
          (cond ((null? cs) (values h #f))
                ((same? (car cs) key) (values h cs))
                (else (loop (cdr cs)))))))

    (define (get who t key default)
      (if (%ht-native? t)
          (%ht-ref who t key default)
          (let-values (((h c) (locate who t key)))
            (if c (%ht-ref who t (car c) default h) default))))

    (define (has? who t key)
      (if (%ht-native? t)
          (%ht-contains? who t key)
          (let-values (((h c) (locate who t key))) (and c #t))))

    (define (put! who t key value)
      (if (%ht-native? t)
          (%ht-set! who t key value)
          (let-values (((h c) (locate who t key)))
            (%ht-set! who t (if c (car c) key) value h))))

    ;; 1 if the key was there, else 0.
    (define (del! who t key)
      (if (%ht-native? t)
          (%ht-delete! who t key)
          (let-values (((h c) (locate who t key)))
            (if c (%ht-delete! who t (car c) h) (begin (%ht-size who t) 0)))))

    ;; ---- predicates and accessors --------------------------------------------

    (define (hash-table? x) (%hash-table? x))
    (define (hash-table-contains? t key) (has? 'hash-table-contains? t key))
    (define (hash-table-exists? t key) (has? 'hash-table-exists? t key))
    (define (hash-table-empty? t) (= 0 (%ht-size 'hash-table-empty? t)))
    (define (hash-table-mutable? t) (%ht-mutable? 'hash-table-mutable? t))
    (define (hash-table-size t) (%ht-size 'hash-table-size t))
    (define (hash-table-equivalence-function t)
      (%ht-equiv 'hash-table-equivalence-function t))
    (define (hash-table-hash-function t)
      (%ht-hash-function 'hash-table-hash-function t))

    ;; (hash-table-ref TABLE KEY [FAILURE [SUCCESS]])
    (define (hash-table-ref t key . opt)
      (let ((v (get 'hash-table-ref t key missing)))
        (cond ((not (eq? v missing))
               (if (and (pair? opt) (pair? (cdr opt)))
                   ((cadr opt) v)
                   v))
              ((and (pair? opt) (car opt)) ((car opt)))
              (else (error "hash-table-ref: no value for the key" key)))))

    (define (hash-table-ref/default t key default)
      (get 'hash-table-ref/default t key default))

    ;; ---- mutators ------------------------------------------------------------

    (define (hash-table-set! t . kvs)
      (let loop ((l kvs))
        (cond ((null? l) (if #f #f))
              ((null? (cdr l))
               (check-table 'hash-table-set! t)
               (error "hash-table-set!: a key without a value" (car l)))
              (else (put! 'hash-table-set! t (car l) (cadr l))
                    (loop (cddr l))))))

    ;; The number of keys that were there.
    (define (hash-table-delete! t . keys)
      (check-table 'hash-table-delete! t)
      (let loop ((l keys) (n 0))
        (if (null? l)
            n
            (loop (cdr l) (+ n (del! 'hash-table-delete! t (car l)))))))

    (define (hash-table-intern! t key failure)
      (let ((v (get 'hash-table-intern! t key missing)))
        (if (eq? v missing)
            (let ((v (failure)))
              (put! 'hash-table-intern! t key v)
              v)
            v)))

    ;; (hash-table-update! TABLE KEY UPDATER [FAILURE [SUCCESS]])
    (define (hash-table-update! t key updater . opt)
      (check-procedure 'hash-table-update! updater)
      (let* ((v (get 'hash-table-update! t key missing))
             (v (cond ((not (eq? v missing))
                       (if (and (pair? opt) (pair? (cdr opt))) ((cadr opt) v) v))
                      ((and (pair? opt) (car opt)) ((car opt)))
                      (else (error "hash-table-update!: no value for the key"
                                   key)))))
        (put! 'hash-table-update! t key (updater v))))

    (define (hash-table-update!/default t key updater default)
      (check-procedure 'hash-table-update!/default updater)
      (put! 'hash-table-update!/default t key
            (updater (get 'hash-table-update!/default t key default))))

    (define (hash-table-pop! t)
      (let ((n (%ht-size 'hash-table-pop! t)))
        (if (= n 0) (error "hash-table-pop!: the hash table is empty" t))
        (let ((k (%ht-key-at 'hash-table-pop! t (- n 1)))
              (v (%ht-value-at 'hash-table-pop! t (- n 1))))
          (%ht-remove-at! 'hash-table-pop! t (- n 1))
          (values k v))))

    (define (hash-table-clear! t) (%ht-clear! 'hash-table-clear! t))

    ;; ---- the whole table -----------------------------------------------------

    (define (hash-table-keys t) (%ht-keys 'hash-table-keys t))
    (define (hash-table-values t) (%ht-values 'hash-table-values t))
    (define (hash-table-entries t)
      (values (%ht-keys 'hash-table-entries t) (%ht-values 'hash-table-entries t)))
    (define (hash-table->alist t) (%ht-alist 'hash-table->alist t))

    ;; Calls (proc key value) for each entry, over a copy of the entries
    ;; taken first, so `proc` may change the table.
    (define (each who proc t)
      (check-procedure who proc)
      (let loop ((ks (%ht-keys who t)) (vs (%ht-values who t)))
        (if (pair? ks)
            (begin (proc (car ks) (car vs))
                   (loop (cdr ks) (cdr vs))))))

    (define (hash-table-find proc t failure)
      (check-procedure 'hash-table-find proc)
      (let loop ((ks (%ht-keys 'hash-table-find t))
                 (vs (%ht-values 'hash-table-find t)))
        (if (null? ks)
            (failure)
            (or (proc (car ks) (car vs)) (loop (cdr ks) (cdr vs))))))

    (define (hash-table-count pred t)
      (check-procedure 'hash-table-count pred)
      (let loop ((ks (%ht-keys 'hash-table-count t))
                 (vs (%ht-values 'hash-table-count t))
                 (n 0))
        (if (null? ks)
            n
            (loop (cdr ks) (cdr vs) (if (pred (car ks) (car vs)) (+ n 1) n)))))

    ;; ---- mapping and folding -------------------------------------------------

    (define (hash-table-map proc comparator t)
      (check-procedure 'hash-table-map proc)
      (let ((new (new-table 'hash-table-map (list comparator))))
        (each 'hash-table-map
              (lambda (k v) (put! 'hash-table-map new k (proc v)))
              t)
        new))

    ;; SRFI 125 order (proc table); SRFI 69's (table proc) too.
    (define (hash-table-for-each a b)
      (if (%hash-table? a)
          (each 'hash-table-for-each b a)
          (each 'hash-table-for-each a b)))

    (define (hash-table-walk t proc) (each 'hash-table-walk proc t))

    (define (hash-table-map! proc t)
      (check-procedure 'hash-table-map! proc)
      (%ht-mutable-check 'hash-table-map! t)
      (each 'hash-table-map!
            (lambda (k v) (put! 'hash-table-map! t k (proc k v)))
            t))

    (define (hash-table-map->list proc t)
      (check-procedure 'hash-table-map->list proc)
      (let loop ((ks (%ht-keys 'hash-table-map->list t))
                 (vs (%ht-values 'hash-table-map->list t))
                 (acc '()))
        (if (null? ks)
            (reverse acc)
            (loop (cdr ks) (cdr vs) (cons (proc (car ks) (car vs)) acc)))))

    ;; (hash-table-fold PROC SEED TABLE), or SRFI 69's (TABLE PROC SEED).
    (define (hash-table-fold a b c)
      (let-values (((proc seed t) (if (%hash-table? a) (values b c a) (values a b c))))
        (check-procedure 'hash-table-fold proc)
        (let loop ((ks (%ht-keys 'hash-table-fold t))
                   (vs (%ht-values 'hash-table-fold t))
                   (acc seed))
          (if (null? ks)
              acc
              (loop (cdr ks) (cdr vs) (proc (car ks) (car vs) acc))))))

    (define (hash-table-prune! proc t)
      (check-procedure 'hash-table-prune! proc)
      (%ht-mutable-check 'hash-table-prune! t)
      (each 'hash-table-prune!
            (lambda (k v) (if (proc k v) (del! 'hash-table-prune! t k)))
            t))

    ;; ---- copying -------------------------------------------------------------

    ;; Immutable unless MUTABLE? is given and true (SRFI 125).
    (define (hash-table-copy t . mutable?)
      (%ht-copy 'hash-table-copy t (and (pair? mutable?) (car mutable?) #t)))

    (define (hash-table-empty-copy t) (%ht-empty-copy 'hash-table-empty-copy t))

    ;; ---- hash tables as sets -------------------------------------------------

    (define (hash-table-union! t1 t2)
      (%ht-mutable-check 'hash-table-union! t1)
      (each 'hash-table-union!
            (lambda (k v)
              (if (not (has? 'hash-table-union! t1 k))
                  (put! 'hash-table-union! t1 k v)))
            t2)
      t1)

    (define (hash-table-merge! t1 t2) (hash-table-union! t1 t2))

    (define (hash-table-intersection! t1 t2)
      (%ht-mutable-check 'hash-table-intersection! t1)
      (check-table 'hash-table-intersection! t2)
      (each 'hash-table-intersection!
            (lambda (k v)
              (if (not (has? 'hash-table-intersection! t2 k))
                  (del! 'hash-table-intersection! t1 k)))
            t1)
      t1)

    (define (hash-table-difference! t1 t2)
      (%ht-mutable-check 'hash-table-difference! t1)
      (check-table 'hash-table-difference! t2)
      (each 'hash-table-difference!
            (lambda (k v)
              (if (has? 'hash-table-difference! t2 k)
                  (del! 'hash-table-difference! t1 k)))
            t1)
      t1)

    (define (hash-table-xor! t1 t2)
      (%ht-mutable-check 'hash-table-xor! t1)
      (each 'hash-table-xor!
            (lambda (k v)
              (if (has? 'hash-table-xor! t1 k)
                  (del! 'hash-table-xor! t1 k)
                  (put! 'hash-table-xor! t1 k v)))
            t2)
      t1)

    ;; (hash-table=? VALUE-COMPARATOR T1 T2): the same keys, and values
    ;; the comparator (or an equality procedure) finds equal.
    (define (hash-table=? value-cmp t1 t2)
      (let ((same? (cond ((comparator? value-cmp)
                          (comparator-equality-predicate value-cmp))
                         ((procedure? value-cmp) value-cmp)
                         (else (fail 'hash-table=? "a comparator" value-cmp)))))
        (and (= (%ht-size 'hash-table=? t1) (%ht-size 'hash-table=? t2))
             (let loop ((ks (%ht-keys 'hash-table=? t1))
                        (vs (%ht-values 'hash-table=? t1)))
               (or (null? ks)
                   (let ((w (get 'hash-table=? t2 (car ks) missing)))
                     (and (not (eq? w missing))
                          (same? (car vs) w)
                          (loop (cdr ks) (cdr vs)))))))))

    (define %loaded #t)))
