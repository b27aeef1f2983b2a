;; (scheme list), also (srfi 1): list procedures (SRFI 1). Linear-update
;; variants (`filter!`, `append!`, ...) are the pure ones, as SRFI 1 allows.
;; Every procedure checks its procedure arguments and the lists it walks,
;; and names itself in its errors.
(define-library (scheme list)
  (export
   ;; constructors
   cons list xcons cons* make-list list-tabulate list-copy circular-list iota
   ;; predicates
   pair? null? proper-list? circular-list? dotted-list? not-pair? null-list?
   list=
   ;; selectors
   car cdr caar cadr cdar cddr caaar caadr cadar caddr cdaar cdadr cddar
   cdddr caaaar caaadr caadar caaddr cadaar cadadr caddar cadddr cdaaar
   cdaadr cdadar cdaddr cddaar cddadr cdddar cddddr list-ref
   first second third fourth fifth sixth seventh eighth ninth tenth
   car+cdr take drop take-right drop-right take! drop-right! split-at
   split-at! last last-pair
   ;; miscellaneous
   length length+ append concatenate reverse append! concatenate! reverse!
   append-reverse append-reverse! zip unzip1 unzip2 unzip3 unzip4 unzip5
   count
   ;; fold, unfold, map
   fold unfold pair-fold reduce fold-right unfold-right pair-fold-right
   reduce-right append-map append-map! pair-for-each filter-map map-in-order
   map for-each map!
   ;; filtering, partitioning
   filter partition remove filter! partition! remove!
   ;; searching
   member memq memv find find-tail any every list-index take-while
   drop-while take-while! span break span! break!
   ;; deleting
   delete delete-duplicates delete! delete-duplicates!
   ;; association lists
   assoc assq assv alist-cons alist-copy alist-delete alist-delete!
   ;; sets as lists
   lset<= lset= lset-adjoin lset-union lset-union! lset-intersection
   lset-intersection! lset-difference lset-difference! lset-xor lset-xor!
   lset-diff+intersection lset-diff+intersection!
   ;; primitive side effects
   set-car! set-cdr!)
  (import (scheme base) (scheme cxr))
  (begin
    ;; ---- checks ------------------------------------------------------------

    (define fail %expected)

    (define check-procedure %check-procedure)

    (define check-count %check-count)

    ;; The end of a list being walked: () ends it, anything else is an error.
    (define (check-end who l whole)
      (if (not (null? l)) (fail who "a proper list" whole)))

    ;; The cars of `lists` and their cdrs, or #f when one of them is at its end.
    (define (cars+cdrs who lists)
      (let loop ((ls lists) (cars '()) (cdrs '()))
        (cond ((null? ls) (values (reverse cars) (reverse cdrs)))
              ((pair? (car ls))
               (loop (cdr ls) (cons (caar ls) cars) (cons (cdar ls) cdrs)))
              ((null? (car ls)) (values #f #f))
              (else (fail who "a list" (car ls))))))

    ;; ---- constructors --------------------------------------------------------

    (define (xcons d a) (cons a d))

    (define (list-tabulate n init)
      (check-count 'list-tabulate n)
      (check-procedure 'list-tabulate init)
      (let loop ((i (- n 1)) (acc '()))
        (if (< i 0) acc (loop (- i 1) (cons (init i) acc)))))

    (define (circular-list x . rest)
      (let ((l (cons x rest)))
        (set-cdr! (last-pair l) l)
        l))

    (define (iota count . rest)
      (check-count 'iota count)
      (let ((start (if (pair? rest) (car rest) 0))
            (step (if (and (pair? rest) (pair? (cdr rest))) (cadr rest) 1)))
        (if (not (number? start)) (fail 'iota "a number" start))
        (if (not (number? step)) (fail 'iota "a number" step))
        (let loop ((i (- count 1)) (acc '()))
          (if (< i 0) acc (loop (- i 1) (cons (+ start (* i step)) acc))))))

    ;; ---- predicates ----------------------------------------------------------

    (define (proper-list? x) (list? x))

    (define (circular-list? x)
      (let loop ((slow x) (fast x))
        (and (pair? fast)
             (let ((fast (cdr fast)))
               (and (pair? fast)
                    (let ((fast (cdr fast)) (slow (cdr slow)))
                      (or (eq? fast slow) (loop slow fast))))))))

    (define (dotted-list? x)
      (let loop ((slow x) (fast x))
        (cond ((pair? fast)
               (let ((fast (cdr fast)))
                 (cond ((pair? fast)
                        (let ((fast (cdr fast)) (slow (cdr slow)))
                          (and (not (eq? fast slow)) (loop slow fast))))
                       (else (not (null? fast))))))
              (else (not (null? fast))))))

    (define (not-pair? x) (not (pair? x)))

    (define (null-list? l)
      (cond ((pair? l) #f)
            ((null? l) #t)
            (else (fail 'null-list? "a list" l))))

    (define (list= elt= . lists)
      (define (two a b)
        (cond ((and (pair? a) (pair? b))
               (and (elt= (car a) (car b)) (two (cdr a) (cdr b))))
              (else (and (null? a) (null? b)))))
      (check-procedure 'list= elt=)
      (let loop ((ls lists))
        (or (null? ls) (null? (cdr ls))
            (and (two (car ls) (cadr ls)) (loop (cdr ls))))))

    ;; ---- selectors -----------------------------------------------------------

    (define (first l) (car l))
    ;; The element at index k of list l, for `second` to `tenth`.
    (define (nth who l k)
      (let loop ((x l) (i k))
        (cond ((not (pair? x))
               (error (string-append (symbol->string who) ": expected a list of at least "
                                     (number->string (+ k 1)) " elements")
                      l))
              ((= i 0) (car x))
              (else (loop (cdr x) (- i 1))))))
    (define (second l) (nth 'second l 1))
    (define (third l) (nth 'third l 2))
    (define (fourth l) (nth 'fourth l 3))
    (define (fifth l) (nth 'fifth l 4))
    (define (sixth l) (nth 'sixth l 5))
    (define (seventh l) (nth 'seventh l 6))
    (define (eighth l) (nth 'eighth l 7))
    (define (ninth l) (nth 'ninth l 8))
    (define (tenth l) (nth 'tenth l 9))

    (define (car+cdr p) (values (car p) (cdr p)))

    (define (too-short who l k)
      (error (string-append (symbol->string who) ": the list is shorter than") k l))

    (define (take l k)
      (check-count 'take k)
      (let loop ((x l) (n k) (acc '()))
        (cond ((= n 0) (reverse acc))
              ((pair? x) (loop (cdr x) (- n 1) (cons (car x) acc)))
              (else (too-short 'take l k)))))

    (define (drop l k)
      (check-count 'drop k)
      (let loop ((x l) (n k))
        (cond ((= n 0) x)
              ((pair? x) (loop (cdr x) (- n 1)))
              (else (too-short 'drop l k)))))

    (define (take-right l k)
      (check-count 'take-right k)
      (let loop ((lag l) (lead (drop l k)))
        (if (pair? lead) (loop (cdr lag) (cdr lead)) lag)))

    (define (drop-right l k)
      (check-count 'drop-right k)
      (let loop ((lag l) (lead (drop l k)) (acc '()))
        (if (pair? lead)
            (loop (cdr lag) (cdr lead) (cons (car lag) acc))
            (reverse acc))))

    (define take! take)
    (define drop-right! drop-right)

    (define (split-at l k)
      (check-count 'split-at k)
      (let loop ((x l) (n k) (acc '()))
        (cond ((= n 0) (values (reverse acc) x))
              ((pair? x) (loop (cdr x) (- n 1) (cons (car x) acc)))
              (else (too-short 'split-at l k)))))

    (define split-at! split-at)

    (define (last-pair l)
      (if (not (pair? l)) (fail 'last-pair "a pair" l))
      (let loop ((l l))
        (if (pair? (cdr l)) (loop (cdr l)) l)))

    (define (last l)
      (if (not (pair? l)) (fail 'last "a non-empty list" l))
      (car (last-pair l)))

    ;; ---- miscellaneous -------------------------------------------------------

    (define (length+ x)
      (let loop ((slow x) (fast x) (n 0))
        (if (pair? fast)
            (let ((fast (cdr fast)) (n (+ n 1)))
              (if (pair? fast)
                  (let ((fast (cdr fast)) (slow (cdr slow)) (n (+ n 1)))
                    (if (eq? fast slow) #f (loop slow fast n)))
                  n))
            n)))

    (define (concatenate lists)
      (%check-list 'concatenate lists)
      (apply append lists))
    (define concatenate! concatenate)
    (define append! append)
    (define reverse! reverse)

    (define (append-reverse rev-head tail)
      (let loop ((l rev-head) (acc tail))
        (cond ((pair? l) (loop (cdr l) (cons (car l) acc)))
              (else (check-end 'append-reverse l rev-head) acc))))

    (define append-reverse! append-reverse)

    (define (zip l . rest)
      (%check-list 'zip l)
      (apply map list l rest))

    (define (unzip1 l) (%check-list 'unzip1 l) (map car l))
    (define (unzip2 l) (%check-list 'unzip2 l) (values (map car l) (map cadr l)))
    (define (unzip3 l)
      (%check-list 'unzip3 l)
      (values (map car l) (map cadr l) (map caddr l)))
    (define (unzip4 l)
      (%check-list 'unzip4 l)
      (values (map car l) (map cadr l) (map caddr l) (map cadddr l)))
    (define (unzip5 l)
      (%check-list 'unzip5 l)
      (values (map car l) (map cadr l) (map caddr l) (map cadddr l)
              (map (lambda (x) (car (cddddr x))) l)))

    (define (count pred l . rest)
      (check-procedure 'count pred)
      (if (null? rest)
          (let loop ((x l) (n 0))
            (cond ((pair? x) (loop (cdr x) (if (pred (car x)) (+ n 1) n)))
                  (else (check-end 'count x l) n)))
          (let loop ((ls (cons l rest)) (n 0))
            (let-values (((cars cdrs) (cars+cdrs 'count ls)))
              (if cars
                  (loop cdrs (if (apply pred cars) (+ n 1) n))
                  n)))))

    ;; ---- fold, unfold, map ---------------------------------------------------

    (define (fold kons knil l . rest)
      (check-procedure 'fold kons)
      (if (null? rest)
          (let loop ((x l) (acc knil))
            (cond ((pair? x) (loop (cdr x) (kons (car x) acc)))
                  (else (check-end 'fold x l) acc)))
          (let loop ((ls (cons l rest)) (acc knil))
            (let-values (((cars cdrs) (cars+cdrs 'fold ls)))
              (if cars
                  (loop cdrs (apply kons (append cars (list acc))))
                  acc)))))

    (define (fold-right kons knil l . rest)
      (check-procedure 'fold-right kons)
      (if (null? rest)
          (let loop ((l (reverse l)) (acc knil))
            (if (pair? l) (loop (cdr l) (kons (car l) acc)) acc))
          (let loop ((ls (cons l rest)))
            (let-values (((cars cdrs) (cars+cdrs 'fold-right ls)))
              (if cars
                  (apply kons (append cars (list (loop cdrs))))
                  knil)))))

    (define (pair-fold kons knil l . rest)
      (check-procedure 'pair-fold kons)
      (let loop ((ls (cons l rest)) (acc knil))
        (if (let any-end ((ls ls))
              (and (pair? ls) (or (not (pair? (car ls))) (any-end (cdr ls)))))
            acc
            (let ((tails (map cdr ls)))
              (loop tails (apply kons (append ls (list acc))))))))

    (define (pair-fold-right kons knil l . rest)
      (check-procedure 'pair-fold-right kons)
      (let loop ((ls (cons l rest)))
        (if (let any-end ((ls ls))
              (and (pair? ls) (or (not (pair? (car ls))) (any-end (cdr ls)))))
            knil
            (apply kons (append ls (list (loop (map cdr ls))))))))

    (define (reduce f ridentity l)
      (check-procedure 'reduce f)
      (cond ((null? l) ridentity)
            ((pair? l) (fold f (car l) (cdr l)))
            (else (fail 'reduce "a list" l))))

    (define (reduce-right f ridentity l)
      (check-procedure 'reduce-right f)
      (cond ((null? l) ridentity)
            ((pair? l)
             (let ((r (reverse l)))
               (fold (lambda (x acc) (f x acc)) (car r) (cdr r))))
            (else (fail 'reduce-right "a list" l))))

    (define (unfold stop? mapper successor seed . tail-gen)
      (check-procedure 'unfold stop?)
      (check-procedure 'unfold mapper)
      (check-procedure 'unfold successor)
      (let loop ((seed seed) (acc '()))
        (if (stop? seed)
            (append-reverse acc (if (pair? tail-gen) ((car tail-gen) seed) '()))
            (loop (successor seed) (cons (mapper seed) acc)))))

    (define (unfold-right stop? mapper successor seed . tail)
      (check-procedure 'unfold-right stop?)
      (check-procedure 'unfold-right mapper)
      (check-procedure 'unfold-right successor)
      (let loop ((seed seed) (acc (if (pair? tail) (car tail) '())))
        (if (stop? seed)
            acc
            (loop (successor seed) (cons (mapper seed) acc)))))

    (define (append-map f l . rest)
      (check-procedure 'append-map f)
      (apply append (apply map f l rest)))

    (define append-map! append-map)
    (define map! map)
    (define map-in-order map)

    (define (pair-for-each f l . rest)
      (check-procedure 'pair-for-each f)
      (let loop ((ls (cons l rest)))
        (if (not (let any-end ((ls ls))
                   (and (pair? ls) (or (not (pair? (car ls))) (any-end (cdr ls))))))
            (let ((tails (map cdr ls)))
              (apply f ls)
              (loop tails)))))

    (define (filter-map f l . rest)
      (check-procedure 'filter-map f)
      (if (null? rest)
          (let loop ((x l) (acc '()))
            (cond ((pair? x)
                   (let ((v (f (car x))))
                     (loop (cdr x) (if v (cons v acc) acc))))
                  (else (check-end 'filter-map x l) (reverse acc))))
          (let loop ((ls (cons l rest)) (acc '()))
            (let-values (((cars cdrs) (cars+cdrs 'filter-map ls)))
              (if cars
                  (let ((v (apply f cars)))
                    (loop cdrs (if v (cons v acc) acc)))
                  (reverse acc))))))

    ;; ---- filtering, partitioning ---------------------------------------------

    (define (filter pred l)
      (check-procedure 'filter pred)
      (let loop ((x l) (acc '()))
        (cond ((pair? x)
               (loop (cdr x) (if (pred (car x)) (cons (car x) acc) acc)))
              (else (check-end 'filter x l) (reverse acc)))))

    (define (remove pred l)
      (check-procedure 'remove pred)
      (filter (lambda (x) (not (pred x))) l))

    (define (partition pred l)
      (check-procedure 'partition pred)
      (let loop ((x l) (in '()) (out '()))
        (cond ((pair? x)
               (if (pred (car x))
                   (loop (cdr x) (cons (car x) in) out)
                   (loop (cdr x) in (cons (car x) out))))
              (else (check-end 'partition x l)
                    (values (reverse in) (reverse out))))))

    (define filter! filter)
    (define remove! remove)
    (define partition! partition)

    ;; ---- searching -----------------------------------------------------------

    (define (find pred l)
      (check-procedure 'find pred)
      (let ((tail (find-tail pred l)))
        (and tail (car tail))))

    (define (find-tail pred l)
      (check-procedure 'find-tail pred)
      (let loop ((x l))
        (cond ((pair? x) (if (pred (car x)) x (loop (cdr x))))
              (else (check-end 'find-tail x l) #f))))

    (define (any pred l . rest)
      (check-procedure 'any pred)
      (if (null? rest)
          (let loop ((x l))
            (cond ((not (pair? x)) (check-end 'any x l) #f)
                  ((null? (cdr x)) (pred (car x)))
                  (else (or (pred (car x)) (loop (cdr x))))))
          (let loop ((ls (cons l rest)))
            (let-values (((cars cdrs) (cars+cdrs 'any ls)))
              (and cars (or (apply pred cars) (loop cdrs)))))))

    (define (every pred l . rest)
      (check-procedure 'every pred)
      (if (null? rest)
          (let loop ((x l))
            (cond ((not (pair? x)) (check-end 'every x l) #t)
                  ((null? (cdr x)) (pred (car x)))
                  (else (and (pred (car x)) (loop (cdr x))))))
          (let loop ((ls (cons l rest)) (last #t))
            (let-values (((cars cdrs) (cars+cdrs 'every ls)))
              (if cars
                  (let ((v (apply pred cars))) (and v (loop cdrs v)))
                  last)))))

    (define (list-index pred l . rest)
      (check-procedure 'list-index pred)
      (let loop ((ls (cons l rest)) (i 0))
        (let-values (((cars cdrs) (cars+cdrs 'list-index ls)))
          (and cars (if (apply pred cars) i (loop cdrs (+ i 1)))))))

    (define (take-while pred l)
      (check-procedure 'take-while pred)
      (let loop ((x l) (acc '()))
        (if (and (pair? x) (pred (car x)))
            (loop (cdr x) (cons (car x) acc))
            (reverse acc))))

    (define (drop-while pred l)
      (check-procedure 'drop-while pred)
      (let loop ((x l))
        (if (and (pair? x) (pred (car x))) (loop (cdr x)) x)))

    (define take-while! take-while)

    (define (span pred l)
      (check-procedure 'span pred)
      (let loop ((x l) (acc '()))
        (if (and (pair? x) (pred (car x)))
            (loop (cdr x) (cons (car x) acc))
            (values (reverse acc) x))))

    (define (break pred l)
      (check-procedure 'break pred)
      (span (lambda (x) (not (pred x))) l))

    (define span! span)
    (define break! break)

    ;; ---- deleting ------------------------------------------------------------

    (define (delete x l . eq)
      (let ((= (if (pair? eq) (car eq) equal?)))
        (check-procedure 'delete =)
        (%check-list 'delete l)
        (filter (lambda (y) (not (= x y))) l)))

    (define delete! delete)

    (define (delete-duplicates l . eq)
      (let ((= (if (pair? eq) (car eq) equal?)))
        (check-procedure 'delete-duplicates =)
        (let loop ((x l) (acc '()))
          (cond ((pair? x)
                 (loop (cdr x)
                       (if (let seen ((a acc))
                             (and (pair? a) (or (= (car a) (car x)) (seen (cdr a)))))
                           acc
                           (cons (car x) acc))))
                (else (check-end 'delete-duplicates x l) (reverse acc))))))

    (define delete-duplicates! delete-duplicates)

    ;; ---- association lists ---------------------------------------------------

    (define (alist-cons key datum alist) (cons (cons key datum) alist))

    (define (alist-copy alist)
      (%check-list 'alist-copy alist)
      (map (lambda (entry) (cons (car entry) (cdr entry))) alist))

    (define (alist-delete key alist . eq)
      (let ((= (if (pair? eq) (car eq) equal?)))
        (check-procedure 'alist-delete =)
        (%check-list 'alist-delete alist)
        (filter (lambda (entry) (not (= key (car entry)))) alist)))

    (define alist-delete! alist-delete)

    ;; ---- sets as lists -------------------------------------------------------

    (define (in? = x set)
      (let loop ((s set))
        (and (pair? s) (or (= (car s) x) (loop (cdr s))))))

    (define (lset<= = . lists)
      (check-procedure 'lset<= =)
      (let loop ((ls lists))
        (or (null? ls) (null? (cdr ls))
            (and (every (lambda (x) (in? = x (cadr ls))) (car ls))
                 (loop (cdr ls))))))

    (define (lset= = . lists)
      (check-procedure 'lset= =)
      (let loop ((ls lists))
        (or (null? ls) (null? (cdr ls))
            (and (every (lambda (x) (in? = x (cadr ls))) (car ls))
                 (every (lambda (x) (in? = x (car ls))) (cadr ls))
                 (loop (cdr ls))))))

    (define (lset-adjoin = set . elts)
      (check-procedure 'lset-adjoin =)
      (fold (lambda (x acc) (if (in? = x acc) acc (cons x acc))) set elts))

    (define (lset-union = . lists)
      (check-procedure 'lset-union =)
      (reduce (lambda (l acc)
                (cond ((null? l) acc)
                      ((null? acc) l)
                      ((eq? l acc) acc)
                      (else (fold (lambda (x acc)
                                    (if (in? (lambda (a b) (= b a)) x acc) acc (cons x acc)))
                                  acc l))))
              '() lists))

    (define (lset-intersection = l . lists)
      (check-procedure 'lset-intersection =)
      (filter (lambda (x) (every (lambda (s) (in? (lambda (a b) (= b a)) x s)) lists))
              l))

    (define (lset-difference = l . lists)
      (check-procedure 'lset-difference =)
      (filter (lambda (x) (not (any (lambda (s) (in? (lambda (a b) (= b a)) x s)) lists)))
              l))

    (define (lset-xor = . lists)
      (check-procedure 'lset-xor =)
      (reduce (lambda (b a)
                (let ((a-b (lset-difference = a b))
                      (b-a (lset-difference = b a)))
                  (append b-a a-b)))
              '() lists))

    (define (lset-diff+intersection = l . lists)
      (check-procedure 'lset-diff+intersection =)
      (partition (lambda (x)
                   (not (any (lambda (s) (in? (lambda (a b) (= b a)) x s)) lists)))
                 l))

    (define lset-union! lset-union)
    (define lset-intersection! lset-intersection)
    (define lset-difference! lset-difference)
    (define lset-xor! lset-xor)
    (define lset-diff+intersection! lset-diff+intersection)

    (define %loaded #t)))
