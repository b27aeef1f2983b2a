;; (scheme charset), also (srfi 14): character sets. A char-set is a record
;; holding its ranges, a vector #(lo0 hi0 lo1 hi1 ...) of code point runs
;; [lo, hi), sorted and apart, without the surrogates; membership, the set
;; algebra and the standard sets (from Unicode 16's general categories)
;; are native (`%cs-` primitives), the rest is here. The linear-update
;; procedures (those ending in !) change and return their base set.
(define-library (scheme charset)
  (export
   char-set? char-set= char-set<= char-set-hash
   char-set-cursor char-set-ref char-set-cursor-next end-of-char-set?
   char-set-fold char-set-unfold char-set-unfold! char-set-for-each char-set-map
   char-set-copy char-set list->char-set string->char-set
   list->char-set! string->char-set!
   char-set-filter ucs-range->char-set char-set-filter! ucs-range->char-set!
   ->char-set
   char-set->list char-set->string
   char-set-size char-set-count char-set-contains?
   char-set-every char-set-any
   char-set-adjoin char-set-delete char-set-adjoin! char-set-delete!
   char-set-complement char-set-union char-set-intersection
   char-set-difference char-set-xor char-set-diff+intersection
   char-set-complement! char-set-union! char-set-intersection!
   char-set-difference! char-set-xor! char-set-diff+intersection!
   char-set:lower-case char-set:upper-case char-set:title-case
   char-set:letter char-set:digit char-set:letter+digit
   char-set:graphic char-set:printing char-set:whitespace
   char-set:iso-control char-set:punctuation char-set:symbol
   char-set:hex-digit char-set:blank char-set:ascii
   char-set:empty char-set:full)
  (import (scheme base))
  (begin
    (define-record-type <char-set> (make-cs ranges) char-set?
      (ranges cs-ranges set-cs-ranges!))

    (define fail %expected)

    (define (check-cs who cs)
      (if (not (char-set? cs)) (fail who "a char-set" cs)))

    (define check-procedure %check-procedure)

    (define (ranges-of who cs)
      (check-cs who cs)
      (cs-ranges cs))

    ;; The base set of an optional argument, copied (or not, for the !
    ;; procedures, which pass #t as `in-place`).
    (define (base who opt in-place)
      (cond ((null? opt) (make-cs (vector)))
            (else (check-cs who (car opt))
                  (if in-place (car opt) (make-cs (cs-ranges (car opt)))))))

    (define empty-ranges (vector))
    (define full-ranges (%cs-complement empty-ranges))

    ;; ---- predicates --------------------------------------------------------

    (define (char-set= . sets)
      (for-each (lambda (cs) (check-cs 'char-set= cs)) sets)
      (or (null? sets)
          (let loop ((first (cs-ranges (car sets))) (rest (cdr sets)))
            (or (null? rest)
                (and (equal? first (cs-ranges (car rest)))
                     (loop first (cdr rest)))))))

    (define (char-set<= . sets)
      (for-each (lambda (cs) (check-cs 'char-set<= cs)) sets)
      (or (null? sets)
          (let loop ((a (cs-ranges (car sets))) (rest (cdr sets)))
            (or (null? rest)
                (let ((b (cs-ranges (car rest))))
                  (and (= 0 (vector-length (%cs-difference a b)))
                       (loop b (cdr rest))))))))

    (define (char-set-hash cs . bound)
      (let ((r (ranges-of 'char-set-hash cs))
            (bound (if (and (pair? bound) (car bound) (not (eqv? (car bound) 0)))
                       (car bound)
                       4194304)))
        (if (not (and (exact-integer? bound) (> bound 0)))
            (fail 'char-set-hash "a positive exact integer bound" bound))
        (let loop ((i 0) (h 0))
          (if (= i (vector-length r))
              (modulo h bound)
              (loop (+ i 1)
                    (modulo (+ (* h 31) (vector-ref r i)) 4194319))))))

    ;; ---- cursors: a cursor is the code point it is at, or #f at the end ----

    (define (char-set-cursor cs)
      (%cs-next (ranges-of 'char-set-cursor cs) 0))

    (define (char-set-ref cs cursor)
      (if (not (and (exact-integer? cursor)
                    (%cs-contains? (ranges-of 'char-set-ref cs) cursor)))
          (error "char-set-ref: not a cursor into this char-set" cursor))
      (integer->char cursor))

    (define (char-set-cursor-next cs cursor)
      (if (not (exact-integer? cursor))
          (error "char-set-cursor-next: not a cursor that is not at the end" cursor))
      (%cs-next (ranges-of 'char-set-cursor-next cs) (+ cursor 1)))

    (define (end-of-char-set? cursor) (not cursor))

    ;; ---- iteration ---------------------------------------------------------

    ;; Calls (f char acc) on each character in order.
    (define (walk r f acc)
      (let outer ((i 0) (acc acc))
        (if (>= i (vector-length r))
            acc
            (let ((hi (vector-ref r (+ i 1))))
              (let inner ((p (vector-ref r i)) (acc acc))
                (if (= p hi)
                    (outer (+ i 2) acc)
                    (inner (+ p 1) (f (integer->char p) acc))))))))

    (define (char-set-fold kons knil cs)
      (check-procedure 'char-set-fold kons)
      (walk (ranges-of 'char-set-fold cs) kons knil))

    (define (char-set-for-each proc cs)
      (check-procedure 'char-set-for-each proc)
      (walk (ranges-of 'char-set-for-each cs) (lambda (c acc) (proc c) acc) #f)
      (if #f #f))

    (define (char-set-map proc cs)
      (check-procedure 'char-set-map proc)
      (make-cs (%cs-from-chars
                (walk (ranges-of 'char-set-map cs)
                      (lambda (c acc) (cons (proc c) acc)) '()))))

    (define (unfold who f p g seed cs)
      (check-procedure who f)
      (check-procedure who p)
      (check-procedure who g)
      (let loop ((seed seed) (acc '()))
        (if (p seed)
            (begin (set-cs-ranges! cs (%cs-union (cs-ranges cs) (%cs-from-chars acc)))
                   cs)
            (loop (g seed) (cons (f seed) acc)))))

    ;; (char-set-unfold stop? mapper successor seed [base-cs]), in SRFI 1's
    ;; order, as SRFI 14's examples and reference implementation have it.
    (define (char-set-unfold p f g seed . base-cs)
      (unfold 'char-set-unfold f p g seed (base 'char-set-unfold base-cs #f)))

    (define (char-set-unfold! p f g seed base-cs)
      (unfold 'char-set-unfold! f p g seed (base 'char-set-unfold! (list base-cs) #t)))

    ;; ---- construction ------------------------------------------------------

    (define (char-set-copy cs) (make-cs (ranges-of 'char-set-copy cs)))

    (define (char-set . chars) (make-cs (%cs-from-chars chars)))

    (define (add! cs r) (set-cs-ranges! cs (%cs-union (cs-ranges cs) r)) cs)

    (define (list->char-set chars . base-cs)
      (add! (base 'list->char-set base-cs #f) (%cs-from-chars chars)))

    (define (list->char-set! chars base-cs)
      (add! (base 'list->char-set! (list base-cs) #t) (%cs-from-chars chars)))

    (define (string->char-set s . base-cs)
      (add! (base 'string->char-set base-cs #f) (%cs-from-string s)))

    (define (string->char-set! s base-cs)
      (add! (base 'string->char-set! (list base-cs) #t) (%cs-from-string s)))

    (define (filter-into who pred cs into)
      (check-procedure who pred)
      (add! into (%cs-from-chars
                  (walk (ranges-of who cs)
                        (lambda (c acc) (if (pred c) (cons c acc) acc))
                        '()))))

    (define (char-set-filter pred cs . base-cs)
      (filter-into 'char-set-filter pred cs (base 'char-set-filter base-cs #f)))

    (define (char-set-filter! pred cs base-cs)
      (filter-into 'char-set-filter! pred cs (base 'char-set-filter! (list base-cs) #t)))

    (define (range-into who lo hi error? into)
      (if (not (and (exact-integer? lo) (exact-integer? hi) (<= 0 lo hi)))
          (error (string-append (symbol->string who)
                                ": expected exact integers 0 <= lower <= upper")
                 lo hi))
      (if (and error?
               (or (> hi #x110000) (and (< lo #xE000) (> hi #xD800))))
          (error (string-append (symbol->string who)
                                ": the range holds code points that are not characters")
                 lo hi))
      (add! into (%cs-range lo hi)))

    (define (ucs-range->char-set lo hi . opt)
      (range-into 'ucs-range->char-set lo hi (and (pair? opt) (car opt))
                  (base 'ucs-range->char-set (if (pair? opt) (cdr opt) '()) #f)))

    (define (ucs-range->char-set! lo hi error? base-cs)
      (range-into 'ucs-range->char-set! lo hi error?
                  (base 'ucs-range->char-set! (list base-cs) #t)))

    (define (->char-set x)
      (cond ((char-set? x) x)
            ((string? x) (string->char-set x))
            ((char? x) (char-set x))
            (else (fail '->char-set "a char-set, a string or a character" x))))

    ;; ---- querying ----------------------------------------------------------

    (define (char-set-size cs) (%cs-size (ranges-of 'char-set-size cs)))

    (define (char-set-count pred cs)
      (check-procedure 'char-set-count pred)
      (walk (ranges-of 'char-set-count cs)
            (lambda (c n) (if (pred c) (+ n 1) n)) 0))

    (define (char-set->list cs)
      (reverse (walk (ranges-of 'char-set->list cs) cons '())))

    (define (char-set->string cs) (list->string (char-set->list cs)))

    (define (char-set-contains? cs c)
      (if (not (char? c)) (fail 'char-set-contains? "a character" c))
      (%cs-contains? (ranges-of 'char-set-contains? cs) c))

    (define (char-set-every pred cs)
      (check-procedure 'char-set-every pred)
      (let ((r (ranges-of 'char-set-every cs)))
        (let outer ((i 0) (last #t))
          (if (>= i (vector-length r))
              last
              (let ((hi (vector-ref r (+ i 1))))
                (let inner ((p (vector-ref r i)) (last last))
                  (if (= p hi)
                      (outer (+ i 2) last)
                      (let ((v (pred (integer->char p))))
                        (and v (inner (+ p 1) v))))))))))

    (define (char-set-any pred cs)
      (check-procedure 'char-set-any pred)
      (let ((r (ranges-of 'char-set-any cs)))
        (let outer ((i 0))
          (if (>= i (vector-length r))
              #f
              (let ((hi (vector-ref r (+ i 1))))
                (let inner ((p (vector-ref r i)))
                  (if (= p hi)
                      (outer (+ i 2))
                      (or (pred (integer->char p))
                          (inner (+ p 1))))))))))

    ;; ---- adding and removing characters --------------------------------------

    (define (char-set-adjoin cs . chars)
      (make-cs (%cs-union (ranges-of 'char-set-adjoin cs) (%cs-from-chars chars))))

    (define (char-set-delete cs . chars)
      (make-cs (%cs-difference (ranges-of 'char-set-delete cs) (%cs-from-chars chars))))

    (define (char-set-adjoin! cs . chars)
      (set-cs-ranges! cs (%cs-union (ranges-of 'char-set-adjoin! cs) (%cs-from-chars chars)))
      cs)

    (define (char-set-delete! cs . chars)
      (set-cs-ranges! cs (%cs-difference (ranges-of 'char-set-delete! cs)
                                         (%cs-from-chars chars)))
      cs)

    ;; ---- algebra -----------------------------------------------------------

    (define (fold-ranges who op init sets)
      (let loop ((acc init) (sets sets))
        (if (null? sets)
            acc
            (loop (op acc (ranges-of who (car sets))) (cdr sets)))))

    (define (char-set-complement cs)
      (make-cs (%cs-complement (ranges-of 'char-set-complement cs))))

    (define (char-set-union . sets)
      (make-cs (fold-ranges 'char-set-union %cs-union empty-ranges sets)))

    (define (char-set-intersection . sets)
      (make-cs (fold-ranges 'char-set-intersection %cs-intersection full-ranges sets)))

    (define (char-set-difference cs . sets)
      (make-cs (fold-ranges 'char-set-difference %cs-difference
                            (ranges-of 'char-set-difference cs) sets)))

    (define (char-set-xor . sets)
      (make-cs (fold-ranges 'char-set-xor %cs-xor empty-ranges sets)))

    (define (char-set-diff+intersection cs . sets)
      (let* ((r (ranges-of 'char-set-diff+intersection cs))
             (all (fold-ranges 'char-set-diff+intersection %cs-union empty-ranges sets)))
        (values (make-cs (%cs-difference r all))
                (make-cs (%cs-intersection r all)))))

    (define (char-set-complement! cs)
      (set-cs-ranges! cs (%cs-complement (ranges-of 'char-set-complement! cs)))
      cs)

    ;; cs's ranges become op folded over them and those of `sets`, for
    ;; procedure `who`; cs. Each operation below is a `define` of its own,
    ;; so that its arity errors name it.
    (define (update! who op cs sets)
      (set-cs-ranges! cs (fold-ranges who op (ranges-of who cs) sets))
      cs)

    (define (char-set-union! cs . sets) (update! 'char-set-union! %cs-union cs sets))
    (define (char-set-intersection! cs . sets)
      (update! 'char-set-intersection! %cs-intersection cs sets))
    (define (char-set-difference! cs . sets)
      (update! 'char-set-difference! %cs-difference cs sets))
    (define (char-set-xor! cs . sets) (update! 'char-set-xor! %cs-xor cs sets))

    (define (char-set-diff+intersection! cs1 cs2 . sets)
      (let* ((r (ranges-of 'char-set-diff+intersection! cs1))
             (all (fold-ranges 'char-set-diff+intersection! %cs-union
                               empty-ranges (cons cs2 sets))))
        (set-cs-ranges! cs1 (%cs-difference r all))
        (set-cs-ranges! cs2 (%cs-intersection r all))
        (values cs1 cs2)))

    ;; ---- the standard sets ---------------------------------------------------

    (define char-set:lower-case (make-cs (%cs-standard 'lower-case)))
    (define char-set:upper-case (make-cs (%cs-standard 'upper-case)))
    (define char-set:title-case (make-cs (%cs-standard 'title-case)))
    (define char-set:letter (make-cs (%cs-standard 'letter)))
    (define char-set:digit (make-cs (%cs-standard 'digit)))
    (define char-set:letter+digit
      (make-cs (%cs-union (cs-ranges char-set:letter) (cs-ranges char-set:digit))))
    (define char-set:graphic (make-cs (%cs-standard 'graphic)))
    (define char-set:printing (make-cs (%cs-standard 'printing)))
    (define char-set:whitespace (make-cs (%cs-standard 'whitespace)))
    (define char-set:iso-control (make-cs (%cs-standard 'iso-control)))
    (define char-set:punctuation (make-cs (%cs-standard 'punctuation)))
    (define char-set:symbol (make-cs (%cs-standard 'symbol)))
    (define char-set:hex-digit (make-cs (%cs-from-string "0123456789abcdefABCDEF")))
    (define char-set:blank (make-cs (%cs-standard 'blank)))
    (define char-set:ascii (make-cs (%cs-range 0 128)))
    (define char-set:empty (make-cs empty-ranges))
    (define char-set:full (make-cs full-ranges))

    (define %loaded #t)))
