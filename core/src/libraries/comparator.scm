;; (scheme comparator), also (srfi 128): comparators, bundles of a type
;; test, an equality, an ordering and a hash function. The hash functions
;; are the engine's own (`%hash`, the hashes of (scheme hash-table)), and
;; take an optional bound as SRFI 69's do.
(define-library (scheme comparator)
  (export
   comparator? comparator-ordered? comparator-hashable?
   make-comparator make-pair-comparator make-list-comparator
   make-vector-comparator make-eq-comparator make-eqv-comparator
   make-equal-comparator
   boolean-hash char-hash char-ci-hash string-hash string-ci-hash
   symbol-hash number-hash
   make-default-comparator default-hash comparator-register-default!
   comparator-type-test-predicate comparator-equality-predicate
   comparator-ordering-predicate comparator-hash-function
   comparator-test-type comparator-check-type comparator-hash
   hash-bound hash-salt
   =? <? >? <=? >=? comparator-if<=>)
  (import (scheme base) (scheme char) (scheme inexact))
  (begin
    (define fail %expected)

    (define check-procedure %check-procedure)

    (define-record-type comparator
      (%make-comparator type-test equality ordering hash ordered? hashable?)
      comparator?
      (type-test comparator-type-test-predicate)
      (equality comparator-equality-predicate)
      (ordering comparator-ordering-predicate)
      (hash comparator-hash-function)
      (ordered? comparator-ordered?)
      (hashable? comparator-hashable?))

    (define (check-comparator who c)
      (if (not (comparator? c)) (fail who "a comparator" c)))

    (define (make-comparator type-test equality ordering hash)
      (let ((type-test (if (eq? type-test #t) (lambda (x) #t) type-test))
            (equality (if (eq? equality #t)
                          (lambda (a b) (and (not (ordering a b))
                                             (not (ordering b a))))
                          equality)))
        (check-procedure 'make-comparator type-test)
        (check-procedure 'make-comparator equality)
        (if ordering (check-procedure 'make-comparator ordering))
        (if hash (check-procedure 'make-comparator hash))
        (%make-comparator
         type-test equality
         (or ordering
             (lambda (a b) (error "comparator: the comparator has no ordering")))
         (or hash
             (lambda (x . bound) (error "comparator: the comparator has no hash function")))
         (and ordering #t) (and hash #t))))

    ;; ---- hash functions ------------------------------------------------------

    (define bounded %hash-bounded)

    (define (hash-bound) 4611686018427387903)
    (define (hash-salt) 0)

    (define (boolean-hash b . bound)
      (if (not (boolean? b)) (fail 'boolean-hash "a boolean" b))
      (bounded 'boolean-hash (if b 1 0) bound))
    (define (char-hash c . bound)
      (if (not (char? c)) (fail 'char-hash "a character" c))
      (bounded 'char-hash (%char-hash c #f) bound))
    (define (char-ci-hash c . bound)
      (if (not (char? c)) (fail 'char-ci-hash "a character" c))
      (bounded 'char-ci-hash (%char-hash c #t) bound))
    (define (string-hash s . bound)
      (bounded 'string-hash (%hash 'string-hash 3 s) bound))
    (define (string-ci-hash s . bound)
      (bounded 'string-ci-hash (%hash 'string-ci-hash 4 s) bound))
    (define (symbol-hash s . bound)
      (if (not (symbol? s)) (fail 'symbol-hash "a symbol" s))
      (bounded 'symbol-hash (%hash 'symbol-hash 0 s) bound))

    ;; Numbers that are `=` hash alike: an inexact number by its exact value.
    (define (number-hash x . bound)
      (if (not (number? x)) (fail 'number-hash "a number" x))
      (bounded 'number-hash (num-hash x) bound))

    (define (num-hash x)
      (cond ((not (real? x))
             (modulo (+ (* 31 (num-hash (real-part x))) (num-hash (imag-part x)))
                     (hash-bound)))
            ((nan? x) 7)
            ((infinite? x) (if (> x 0) 11 13))
            ((exact? x) (%hash 'number-hash 1 x))
            (else (%hash 'number-hash 1 (exact x)))))

    ;; ---- the default comparator ----------------------------------------------
    ;; Its order between types: the empty list, pairs, booleans, characters,
    ;; strings, symbols, numbers, vectors, bytevectors, then the types
    ;; registered with comparator-register-default! in the order they were
    ;; registered, then everything else (all alike).

    (define registered '())

    (define (comparator-register-default! c)
      (check-comparator 'comparator-register-default! c)
      (set! registered (append registered (list c))))

    (define (registered-index x)
      (let loop ((l registered) (i 0))
        (cond ((null? l) #f)
              (((comparator-type-test-predicate (car l)) x) i)
              (else (loop (cdr l) (+ i 1))))))

    (define (type-rank x)
      (cond ((null? x) 0) ((pair? x) 1) ((boolean? x) 2) ((char? x) 3)
            ((string? x) 4) ((symbol? x) 5) ((number? x) 6) ((vector? x) 7)
            ((bytevector? x) 8)
            ((registered-index x) => (lambda (i) (+ 9 i)))
            (else 1000000)))

    (define (registered-of x)
      (let ((i (registered-index x))) (and i (list-ref registered i))))

    (define (default=? a b)
      (let ((ra (type-rank a)) (rb (type-rank b)))
        (and (= ra rb)
             (case ra
               ((0) #t)
               ((1) (and (default=? (car a) (car b)) (default=? (cdr a) (cdr b))))
               ((2) (eq? a b))
               ((3) (char=? a b))
               ((4) (string=? a b))
               ((5) (eq? a b))
               ((6) (= a b))
               ((7) (and (= (vector-length a) (vector-length b))
                         (let loop ((i 0))
                           (or (= i (vector-length a))
                               (and (default=? (vector-ref a i) (vector-ref b i))
                                    (loop (+ i 1)))))))
               ((8) (equal? a b))
               ((1000000) (eqv? a b))
               (else ((comparator-equality-predicate (registered-of a)) a b))))))

    (define (number<? a b)
      (if (and (real? a) (real? b))
          (< a b)
          (or (< (real-part a) (real-part b))
              (and (= (real-part a) (real-part b))
                   (< (imag-part a) (imag-part b))))))

    (define (sequence<? len ref a b)
      (let ((la (len a)) (lb (len b)))
        (cond ((< la lb) #t)
              ((> la lb) #f)
              (else
               (let loop ((i 0))
                 (cond ((= i la) #f)
                       ((default<? (ref a i) (ref b i)) #t)
                       ((default<? (ref b i) (ref a i)) #f)
                       (else (loop (+ i 1)))))))))

    (define (default<? a b)
      (let ((ra (type-rank a)) (rb (type-rank b)))
        (cond ((< ra rb) #t)
              ((> ra rb) #f)
              (else
               (case ra
                 ((0) #f)
                 ((1) (or (default<? (car a) (car b))
                          (and (default=? (car a) (car b))
                               (default<? (cdr a) (cdr b)))))
                 ((2) (and (not a) b))
                 ((3) (char<? a b))
                 ((4) (string<? a b))
                 ((5) (string<? (symbol->string a) (symbol->string b)))
                 ((6) (number<? a b))
                 ((7) (sequence<? vector-length vector-ref a b))
                 ((8) (sequence<? bytevector-length bytevector-u8-ref a b))
                 ((1000000) #f)
                 (else ((comparator-ordering-predicate (registered-of a)) a b)))))))

    ;; At most `budget` parts of a structure count, so a hash is bounded.
    (define (default-hash x . bound)
      (bounded 'default-hash (structure-hash x 16) bound))

    (define (structure-hash x depth)
      (cond ((number? x) (num-hash x))
            ((and (pair? x) (> depth 0))
             (modulo (+ (* 31 (structure-hash (car x) (- depth 1)))
                        (structure-hash (cdr x) (- depth 1)) 1)
                     (hash-bound)))
            ((pair? x) 17)
            ((and (vector? x) (> depth 0))
             (let loop ((i 0) (h (vector-length x)))
               (if (or (= i (vector-length x)) (= i 16))
                   h
                   (loop (+ i 1)
                         (modulo (+ (* 31 h) (structure-hash (vector-ref x i) (- depth 1)))
                                 (hash-bound))))))
            ((vector? x) 19)
            ((registered-of x) => (lambda (c) ((comparator-hash-function c) x)))
            (else (%hash 'default-hash 2 x))))

    (define default-comparator
      (%make-comparator (lambda (x) #t) default=? default<? default-hash #t #t))

    (define (make-default-comparator) default-comparator)

    ;; ---- comparators for eq?, eqv?, equal? -------------------------------------

    (define (make-eq-comparator)
      (%make-comparator (lambda (x) #t) eq? default<? default-hash #t #t))
    (define (make-eqv-comparator)
      (%make-comparator (lambda (x) #t) eqv? default<? default-hash #t #t))
    (define (make-equal-comparator)
      (%make-comparator (lambda (x) #t) equal? default<? default-hash #t #t))

    ;; ---- compound comparators --------------------------------------------------

    (define (make-pair-comparator ca cd)
      (check-comparator 'make-pair-comparator ca)
      (check-comparator 'make-pair-comparator cd)
      (%make-comparator
       (lambda (x) (and (pair? x)
                        ((comparator-type-test-predicate ca) (car x))
                        ((comparator-type-test-predicate cd) (cdr x))))
       (lambda (a b) (and ((comparator-equality-predicate ca) (car a) (car b))
                          ((comparator-equality-predicate cd) (cdr a) (cdr b))))
       (lambda (a b) (or ((comparator-ordering-predicate ca) (car a) (car b))
                         (and ((comparator-equality-predicate ca) (car a) (car b))
                              ((comparator-ordering-predicate cd) (cdr a) (cdr b)))))
       (lambda (x . bound)
         (bounded 'comparator-hash
                  (modulo (+ (* 31 ((comparator-hash-function ca) (car x)))
                             ((comparator-hash-function cd) (cdr x)))
                          (hash-bound))
                  bound))
       (and (comparator-ordered? ca) (comparator-ordered? cd))
       (and (comparator-hashable? ca) (comparator-hashable? cd))))

    ;; Sequences: shorter ones first, then element by element.
    (define (make-sequence-comparator who c type-test empty? head tail)
      (check-comparator who c)
      (letrec ((same? (lambda (a b)
                        (cond ((empty? a) (empty? b))
                              ((empty? b) #f)
                              (else (and ((comparator-equality-predicate c) (head a) (head b))
                                         (same? (tail a) (tail b)))))))
               (less? (lambda (a b)
                        (cond ((empty? a) (not (empty? b)))
                              ((empty? b) #f)
                              (((comparator-ordering-predicate c) (head a) (head b)) #t)
                              (((comparator-equality-predicate c) (head a) (head b))
                               (less? (tail a) (tail b)))
                              (else #f)))))
        (%make-comparator
         (lambda (x)
           (and (type-test x)
                (let loop ((x x))
                  (or (empty? x)
                      (and ((comparator-type-test-predicate c) (head x))
                           (loop (tail x)))))))
         same? less?
         (lambda (x . bound)
           (let loop ((x x) (h 0))
             (if (empty? x)
                 (bounded who h bound)
                 (loop (tail x)
                       (modulo (+ (* 31 h) ((comparator-hash-function c) (head x)))
                               (hash-bound))))))
         (comparator-ordered? c) (comparator-hashable? c))))

    (define (make-list-comparator c type-test empty? head tail)
      (make-sequence-comparator 'make-list-comparator c type-test empty? head tail))

    ;; Vectors order by length first, then element by element.
    (define (make-vector-comparator c type-test length ref)
      (check-comparator 'make-vector-comparator c)
      (let ((elem=? (comparator-equality-predicate c))
            (elem<? (comparator-ordering-predicate c)))
        (%make-comparator
         (lambda (x)
           (and (type-test x)
                (let loop ((i 0))
                  (or (= i (length x))
                      (and ((comparator-type-test-predicate c) (ref x i))
                           (loop (+ i 1)))))))
         (lambda (a b)
           (and (= (length a) (length b))
                (let loop ((i 0))
                  (or (= i (length a))
                      (and (elem=? (ref a i) (ref b i)) (loop (+ i 1)))))))
         (lambda (a b)
           (cond ((< (length a) (length b)) #t)
                 ((> (length a) (length b)) #f)
                 (else
                  (let loop ((i 0))
                    (cond ((= i (length a)) #f)
                          ((elem<? (ref a i) (ref b i)) #t)
                          ((elem=? (ref a i) (ref b i)) (loop (+ i 1)))
                          (else #f))))))
         (lambda (x . bound)
           (let loop ((i 0) (h (length x)))
             (if (= i (length x))
                 (bounded 'comparator-hash h bound)
                 (loop (+ i 1)
                       (modulo (+ (* 31 h) ((comparator-hash-function c) (ref x i)))
                               (hash-bound))))))
         (comparator-ordered? c) (comparator-hashable? c))))

    ;; ---- using comparators -----------------------------------------------------

    (define (comparator-test-type c x)
      (check-comparator 'comparator-test-type c)
      ((comparator-type-test-predicate c) x))

    (define (comparator-check-type c x)
      (check-comparator 'comparator-check-type c)
      (if ((comparator-type-test-predicate c) x)
          #t
          (error "comparator-check-type: the object is not of the comparator's type" x)))

    (define (comparator-hash c x)
      (check-comparator 'comparator-hash c)
      ((comparator-hash-function c) x))

    (define (chain who c a b rest ok?)
      (check-comparator who c)
      (let loop ((a a) (b b) (rest rest))
        (and (ok? c a b)
             (or (null? rest) (loop b (car rest) (cdr rest))))))

    (define (=? c a b . rest)
      (chain '=? c a b rest
             (lambda (c a b) ((comparator-equality-predicate c) a b))))
    (define (<? c a b . rest)
      (chain '<? c a b rest
             (lambda (c a b) ((comparator-ordering-predicate c) a b))))
    (define (>? c a b . rest)
      (chain '>? c a b rest
             (lambda (c a b) ((comparator-ordering-predicate c) b a))))
    (define (<=? c a b . rest)
      (chain '<=? c a b rest
             (lambda (c a b) (not ((comparator-ordering-predicate c) b a)))))
    (define (>=? c a b . rest)
      (chain '>=? c a b rest
             (lambda (c a b) (not ((comparator-ordering-predicate c) a b)))))

    ;; comparator-if<=> is syntax of the prelude's
    ;; (|comparator-if<=>@(scheme comparator)|): see there.

    (define %loaded #t)))
