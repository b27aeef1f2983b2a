;; (scheme ilist), also (srfi 116): immutable pairs and lists. An ipair is
;; a record of two fields that nothing can change; ilists end in the
;; empty list, which ordinary and immutable lists share. The procedures
;; are SRFI 1's without the linear-update ones, the circular lists and
;; the lset operations, with an `i` in their names. Procedures over
;; several ilists stop at the shortest. `iq` (syntax, in the prelude)
;; quotes its data as ilists.
(define-library (scheme ilist)
  (export
   iq ipair ilist xipair ipair* make-ilist ilist-tabulate ilist-copy iiota
   ipair? proper-ilist? ilist? dotted-ilist? not-ipair? null-ilist? ilist=
   icar icdr
   icaar icadr icdar icddr
   icaaar icaadr icadar icaddr icdaar icdadr icddar icdddr
   icaaaar icaaadr icaadar icaaddr icadaar icadadr icaddar icadddr
   icdaaar icdaadr icdadar icdaddr icddaar icddadr icdddar icddddr
   ilist-ref ifirst isecond ithird ifourth ififth isixth iseventh ieighth
   ininth itenth icar+icdr itake idrop ilist-tail itake-right idrop-right
   isplit-at ilast last-ipair
   ilength iappend iconcatenate ireverse iappend-reverse
   izip iunzip1 iunzip2 iunzip3 iunzip4 iunzip5 icount
   imap ifor-each ifold iunfold ipair-fold ireduce ifold-right iunfold-right
   ipair-fold-right ireduce-right iappend-map ipair-for-each ifilter-map
   imap-in-order
   ifilter ipartition iremove
   imember imemq imemv ifind ifind-tail iany ievery ilist-index
   itake-while idrop-while ispan ibreak
   idelete idelete-duplicates
   iassoc iassq iassv ialist-cons ialist-delete
   replace-icar replace-icdr
   pair->ipair ipair->pair list->ilist ilist->list
   tree->itree itree->tree gtree->itree gtree->tree
   iapply
   ipair-comparator ilist-comparator make-ilist-comparator
   make-improper-ilist-comparator make-icar-comparator make-icdr-comparator)
  (import (scheme base) (scheme comparator))
  (begin
    (define fail %expected)

    (define-record-type <ipair>
      (ipair a d)
      ipair?
      (a %icar)
      (d %icdr))

    (define check-procedure %check-procedure)

    (define check-index %check-count)

    (define (check-ipair who x)
      (if (not (ipair? x)) (fail who "an ipair" x)))

    ;; At the end of a walk over an ilist: it must be ().
    (define (check-end who x)
      (if (not (null? x)) (fail who "a proper ilist" x)))

    (define (icar p) (check-ipair 'icar p) (%icar p))
    (define (icdr p) (check-ipair 'icdr p) (%icdr p))

    ;; The elements of ilist l as a list (checked to be a proper ilist).
    (define (elements who l)
      (let loop ((x l) (acc '()))
        (cond ((ipair? x) (loop (%icdr x) (cons (%icar x) acc)))
              ((null? x) (reverse acc))
              (else (fail who "a proper ilist" l)))))

    ;; The ilist of the elements of list l (in order), ending in tail.
    (define (list->ilist* l tail)
      (let loop ((r (reverse l)) (acc tail))
        (if (null? r) acc (loop (cdr r) (ipair (car r) acc)))))

    ;; The ilist of list r reversed, ending in tail.
    (define (rev->ilist r tail)
      (let loop ((r r) (acc tail))
        (if (null? r) acc (loop (cdr r) (ipair (car r) acc)))))

    (define (ilist . xs) (list->ilist* xs '()))

    (define (xipair d a) (ipair a d))

    (define (ipair* x . rest)
      (if (null? rest)
          x
          (let ((all (cons x rest)))
            (let ((r (reverse all)))
              (rev->ilist (cdr r) (car r))))))

    (define (make-ilist n . fill)
      (check-index 'make-ilist n)
      (let ((x (if (pair? fill) (car fill) #f)))
        (let loop ((i 0) (acc '()))
          (if (= i n) acc (loop (+ i 1) (ipair x acc))))))

    (define (ilist-tabulate n proc)
      (check-index 'ilist-tabulate n)
      (check-procedure 'ilist-tabulate proc)
      (let loop ((i (- n 1)) (acc '()))
        (if (< i 0) acc (loop (- i 1) (ipair (proc i) acc)))))

    (define (ilist-copy l)
      (let loop ((x l) (acc '()))
        (if (ipair? x) (loop (%icdr x) (cons (%icar x) acc)) (rev->ilist acc x))))

    (define (iiota count . opt)
      (check-index 'iiota count)
      (let ((start (if (pair? opt) (car opt) 0))
            (step (if (and (pair? opt) (pair? (cdr opt))) (cadr opt) 1)))
        (if (not (number? start)) (fail 'iiota "a number" start))
        (if (not (number? step)) (fail 'iiota "a number" step))
        (let loop ((i (- count 1)) (acc '()))
          (if (< i 0) acc (loop (- i 1) (ipair (+ start (* i step)) acc))))))

    ;; Predicates

    (define (proper-ilist? x)
      (let loop ((x x))
        (cond ((ipair? x) (loop (%icdr x)))
              (else (null? x)))))

    (define (ilist? x) (proper-ilist? x))
    (define (dotted-ilist? x) (not (proper-ilist? x)))
    (define (not-ipair? x) (not (ipair? x)))

    (define (null-ilist? l)
      (cond ((null? l) #t)
            ((ipair? l) #f)
            (else (fail 'null-ilist? "an ilist" l))))

    (define (ilist= elt= . ls)
      (check-procedure 'ilist= elt=)
      (let loop ((ls ls))
        (or (null? ls) (null? (cdr ls))
            (and (let ((a (car ls)) (b (cadr ls)))
                   (or (eq? a b)
                       (let walk ((a a) (b b))
                         (cond ((and (null? a) (null? b)) #t)
                               ((and (ipair? a) (ipair? b))
                                (and (elt= (%icar a) (%icar b)) (walk (%icdr a) (%icdr b))))
                               ((or (ipair? a) (ipair? b) (null? a) (null? b)) #f)
                               (else (fail 'ilist= "a proper ilist" (if (null? a) b a)))))))
                 (loop (cdr ls))))))

    ;; Selectors

    (define (cxr who p)
      ;; icaar to icddddr: each follows the a's and d's of its own
      ;; name, from the innermost (rightmost) out.
      (let ((name (symbol->string who)))
        (let loop ((i (- (string-length name) 2)) (x p))
          (cond ((= i 1) x)
                ((not (ipair? x)) (fail who "an ipair" x))
                ((char=? (string-ref name i) #\a) (loop (- i 1) (%icar x)))
                (else (loop (- i 1) (%icdr x)))))))

    (define-syntax define-cxrs
      (syntax-rules () ((_ name ...) (begin (define (name p) (cxr 'name p)) ...))))
    (define-cxrs icaar icadr icdar icddr icaaar icaadr icadar icaddr icdaar icdadr icddar icdddr icaaaar icaaadr
      icaadar icaaddr icadaar icadadr icaddar icadddr icdaaar icdaadr icdadar icdaddr icddaar icddadr icdddar icddddr)

    ;; The tail of l after k ipairs.
    (define (tail who l k)
      (check-index who k)
      (let loop ((x l) (i k))
        (cond ((= i 0) x)
              ((ipair? x) (loop (%icdr x) (- i 1)))
              (else (error (string-append (symbol->string who)
                                          ": the ilist is too short")
                           k)))))

    (define (ilist-ref l k)
      (let ((x (tail 'ilist-ref l k)))
        (if (not (ipair? x)) (error "ilist-ref: index out of range" k))
        (%icar x)))

    (define (nth who k)
      (lambda (l)
        (let ((x (tail who l k)))
          (if (not (ipair? x)) (error (string-append (symbol->string who) ": the ilist is too short") l))
          (%icar x))))

    (define ifirst (nth 'ifirst 0))
    (define isecond (nth 'isecond 1))
    (define ithird (nth 'ithird 2))
    (define ifourth (nth 'ifourth 3))
    (define ififth (nth 'ififth 4))
    (define isixth (nth 'isixth 5))
    (define iseventh (nth 'iseventh 6))
    (define ieighth (nth 'ieighth 7))
    (define ininth (nth 'ininth 8))
    (define itenth (nth 'itenth 9))

    (define (icar+icdr p)
      (check-ipair 'icar+icdr p)
      (values (%icar p) (%icdr p)))

    (define (itake l k)
      (check-index 'itake k)
      (let loop ((x l) (i k) (acc '()))
        (cond ((= i 0) (rev->ilist acc '()))
              ((ipair? x) (loop (%icdr x) (- i 1) (cons (%icar x) acc)))
              (else (error "itake: the ilist is too short" k)))))

    (define (idrop l k) (tail 'idrop l k))
    (define (ilist-tail l k) (tail 'ilist-tail l k))

    ;; The length of dotted ilist l (its ipairs).
    (define (dlength l)
      (let loop ((x l) (n 0)) (if (ipair? x) (loop (%icdr x) (+ n 1)) n)))

    (define (itake-right l k)
      (check-index 'itake-right k)
      (let ((n (dlength l)))
        (if (> k n) (error "itake-right: the ilist is too short" k))
        (tail 'itake-right l (- n k))))

    (define (idrop-right l k)
      (check-index 'idrop-right k)
      (let ((n (dlength l)))
        (if (> k n) (error "idrop-right: the ilist is too short" k))
        (itake l (- n k))))

    (define (isplit-at l k)
      (values (itake l k) (tail 'isplit-at l k)))

    (define (last-ipair l)
      (check-ipair 'last-ipair l)
      (let loop ((x l)) (if (ipair? (%icdr x)) (loop (%icdr x)) x)))

    (define (ilast l)
      (check-ipair 'ilast l)
      (%icar (last-ipair l)))

    ;; Miscellaneous

    (define (ilength l)
      (let loop ((x l) (n 0))
        (cond ((ipair? x) (loop (%icdr x) (+ n 1)))
              ((null? x) n)
              (else (fail 'ilength "a proper ilist" l)))))

    (define (iappend . ls)
      (cond ((null? ls) '())
            (else
             (let loop ((r (reverse ls)) (acc #f))
               (cond ((null? r) acc)
                     ((not acc) (loop (cdr r) (car r)))
                     (else (loop (cdr r) (list->ilist* (elements 'iappend (car r)) acc))))))))

    (define (iconcatenate ls)
      (apply iappend (elements 'iconcatenate ls)))

    (define (ireverse l) (rev->ilist (elements 'ireverse l) '()))

    (define (iappend-reverse rev tail)
      (rev->ilist (elements 'iappend-reverse rev) tail))

    ;; For several ilists: #f when any is empty, else the list of their
    ;; icars and the list of their icdrs.
    (define (cars+cdrs who ls)
      (let loop ((ls ls) (cars '()) (cdrs '()))
        (cond ((null? ls) (values (reverse cars) (reverse cdrs)))
              ((ipair? (car ls))
               (loop (cdr ls) (cons (%icar (car ls)) cars) (cons (%icdr (car ls)) cdrs)))
              ((null? (car ls)) (values #f #f))
              (else (fail who "a proper ilist" (car ls))))))

    (define (izip l . ls) (apply imap ilist l ls))

    (define (unzip who l n)
      ;; a list of n element lists
      (let loop ((x (elements who l)) (accs (make-list n '())))
        (if (null? x)
            (map (lambda (acc) (rev->ilist acc '())) accs)
            (let ((e (car x)))
              (loop (cdr x)
                    (let fill ((i 0) (e e) (accs accs))
                      (if (= i n)
                          '()
                          (begin
                            (if (not (ipair? e)) (fail who "an ilist of ilists" l))
                            (cons (cons (%icar e) (car accs))
                                  (fill (+ i 1) (%icdr e) (cdr accs)))))))))))

    (define (iunzip1 l) (car (unzip 'iunzip1 l 1)))
    (define (iunzip2 l) (apply values (unzip 'iunzip2 l 2)))
    (define (iunzip3 l) (apply values (unzip 'iunzip3 l 3)))
    (define (iunzip4 l) (apply values (unzip 'iunzip4 l 4)))
    (define (iunzip5 l) (apply values (unzip 'iunzip5 l 5)))

    (define (icount pred l . ls)
      (check-procedure 'icount pred)
      (let loop ((ls (cons l ls)) (n 0))
        (let-values (((cars cdrs) (cars+cdrs 'icount ls)))
          (if cars
              (loop cdrs (if (apply pred cars) (+ n 1) n))
              n))))

    ;; Fold, unfold and map

    (define (ifold kons knil l . ls)
      (check-procedure 'ifold kons)
      (if (null? ls)
          (let loop ((x l) (acc knil))
            (if (ipair? x)
                (loop (%icdr x) (kons (%icar x) acc))
                (begin (check-end 'ifold x) acc)))
          (let loop ((ls (cons l ls)) (acc knil))
            (let-values (((cars cdrs) (cars+cdrs 'ifold ls)))
              (if cars (loop cdrs (apply kons (append cars (list acc)))) acc)))))

    (define (ifold-right kons knil l . ls)
      (check-procedure 'ifold-right kons)
      (if (null? ls)
          (let loop ((r (reverse (elements 'ifold-right l))) (acc knil))
            (if (null? r) acc (loop (cdr r) (kons (car r) acc))))
          (let collect ((ls (cons l ls)) (rows '()))
            (let-values (((cars cdrs) (cars+cdrs 'ifold-right ls)))
              (if cars
                  (collect cdrs (cons cars rows))
                  (let loop ((rows rows) (acc knil))
                    (if (null? rows)
                        acc
                        (loop (cdr rows) (apply kons (append (car rows) (list acc)))))))))))

    ;; The successive tails of several ilists, while none is empty.
    (define (tails who ls)
      (let loop ((ls ls) (acc '()))
        (if (and (pair? ls)
                 (let check ((xs ls))
                   (cond ((null? xs) #t)
                         ((ipair? (car xs)) (check (cdr xs)))
                         ((null? (car xs)) #f)
                         (else (fail who "a proper ilist" (car xs))))))
            (loop (map %icdr ls) (cons ls acc))
            (reverse acc))))

    (define (ipair-fold kons knil l . ls)
      (check-procedure 'ipair-fold kons)
      (let loop ((rows (tails 'ipair-fold (cons l ls))) (acc knil))
        (if (null? rows) acc (loop (cdr rows) (apply kons (append (car rows) (list acc)))))))

    (define (ipair-fold-right kons knil l . ls)
      (check-procedure 'ipair-fold-right kons)
      (let loop ((rows (reverse (tails 'ipair-fold-right (cons l ls)))) (acc knil))
        (if (null? rows) acc (loop (cdr rows) (apply kons (append (car rows) (list acc)))))))

    (define (ireduce f ridentity l)
      (check-procedure 'ireduce f)
      (let ((xs (elements 'ireduce l)))
        (if (null? xs)
            ridentity
            (let loop ((xs (cdr xs)) (acc (car xs)))
              (if (null? xs) acc (loop (cdr xs) (f (car xs) acc)))))))

    (define (ireduce-right f ridentity l)
      (check-procedure 'ireduce-right f)
      (let ((r (reverse (elements 'ireduce-right l))))
        (if (null? r)
            ridentity
            (let loop ((r (cdr r)) (acc (car r)))
              (if (null? r) acc (loop (cdr r) (f (car r) acc)))))))

    (define (iunfold p f g seed . tail-gen)
      (check-procedure 'iunfold p)
      (check-procedure 'iunfold f)
      (check-procedure 'iunfold g)
      (let loop ((seed seed) (acc '()))
        (if (p seed)
            (rev->ilist acc (if (pair? tail-gen) ((car tail-gen) seed) '()))
            (loop (g seed) (cons (f seed) acc)))))

    (define (iunfold-right p f g seed . tail)
      (check-procedure 'iunfold-right p)
      (check-procedure 'iunfold-right f)
      (check-procedure 'iunfold-right g)
      (let loop ((seed seed) (acc (if (pair? tail) (car tail) '())))
        (if (p seed) acc (loop (g seed) (ipair (f seed) acc)))))

    (define (map-rows who f ls)
      (check-procedure who f)
      (let loop ((ls ls) (acc '()))
        (let-values (((cars cdrs) (cars+cdrs who ls)))
          (if cars (loop cdrs (cons (apply f cars) acc)) (reverse acc)))))

    (define (imap f l . ls) (list->ilist* (map-rows 'imap f (cons l ls)) '()))
    (define (imap-in-order f l . ls) (list->ilist* (map-rows 'imap-in-order f (cons l ls)) '()))

    (define (ifor-each f l . ls)
      (map-rows 'ifor-each f (cons l ls))
      (if #f #f))

    (define (iappend-map f l . ls)
      (apply iappend (map-rows 'iappend-map f (cons l ls))))

    (define (ipair-for-each f l . ls)
      (check-procedure 'ipair-for-each f)
      (for-each (lambda (row) (apply f row)) (tails 'ipair-for-each (cons l ls)))
      (if #f #f))

    (define (ifilter-map f l . ls)
      (let loop ((xs (map-rows 'ifilter-map f (cons l ls))) (acc '()))
        (cond ((null? xs) (rev->ilist acc '()))
              ((car xs) (loop (cdr xs) (cons (car xs) acc)))
              (else (loop (cdr xs) acc)))))

    ;; Filtering and partitioning

    (define (ifilter pred l)
      (check-procedure 'ifilter pred)
      (let loop ((xs (elements 'ifilter l)) (acc '()))
        (cond ((null? xs) (rev->ilist acc '()))
              ((pred (car xs)) (loop (cdr xs) (cons (car xs) acc)))
              (else (loop (cdr xs) acc)))))

    (define (iremove pred l)
      (check-procedure 'iremove pred)
      (ifilter (lambda (x) (not (pred x))) l))

    (define (ipartition pred l)
      (check-procedure 'ipartition pred)
      (let loop ((xs (elements 'ipartition l)) (in '()) (out '()))
        (cond ((null? xs) (values (rev->ilist in '()) (rev->ilist out '())))
              ((pred (car xs)) (loop (cdr xs) (cons (car xs) in) out))
              (else (loop (cdr xs) in (cons (car xs) out))))))

    ;; Searching

    (define (ifind-tail pred l)
      (check-procedure 'ifind-tail pred)
      (let loop ((x l))
        (cond ((ipair? x) (if (pred (%icar x)) x (loop (%icdr x))))
              (else (check-end 'ifind-tail x) #f))))

    (define (ifind pred l)
      (check-procedure 'ifind pred)
      (let ((t (ifind-tail pred l)))
        (and t (%icar t))))

    (define (member-by who x l same)
      (check-procedure who same)
      (let loop ((t l))
        (cond ((ipair? t) (if (same x (%icar t)) t (loop (%icdr t))))
              (else (check-end who t) #f))))

    (define (imember x l . opt) (member-by 'imember x l (if (pair? opt) (car opt) equal?)))
    (define (imemq x l) (member-by 'imemq x l eq?))
    (define (imemv x l) (member-by 'imemv x l eqv?))

    (define (iany pred l . ls)
      (check-procedure 'iany pred)
      (let loop ((ls (cons l ls)))
        (let-values (((cars cdrs) (cars+cdrs 'iany ls)))
          (and cars
               (let-values (((more ignored) (cars+cdrs 'iany cdrs)))
                 (if more
                     (or (apply pred cars) (loop cdrs))
                     (apply pred cars)))))))

    (define (ievery pred l . ls)
      (check-procedure 'ievery pred)
      (let loop ((ls (cons l ls)))
        (let-values (((cars cdrs) (cars+cdrs 'ievery ls)))
          (or (not cars)
              (let-values (((more ignored) (cars+cdrs 'ievery cdrs)))
                (if more
                    (and (apply pred cars) (loop cdrs))
                    (apply pred cars)))))))

    (define (ilist-index pred l . ls)
      (check-procedure 'ilist-index pred)
      (let loop ((ls (cons l ls)) (i 0))
        (let-values (((cars cdrs) (cars+cdrs 'ilist-index ls)))
          (and cars (if (apply pred cars) i (loop cdrs (+ i 1)))))))

    (define (ispan pred l)
      (check-procedure 'ispan pred)
      (let loop ((x l) (acc '()))
        (cond ((and (ipair? x) (pred (%icar x))) (loop (%icdr x) (cons (%icar x) acc)))
              (else
               (if (not (ipair? x)) (check-end 'ispan x))
               (values (rev->ilist acc '()) x)))))

    (define (ibreak pred l)
      (check-procedure 'ibreak pred)
      (ispan (lambda (x) (not (pred x))) l))

    (define (itake-while pred l)
      (check-procedure 'itake-while pred)
      (let-values (((head rest) (ispan pred l))) head))

    (define (idrop-while pred l)
      (check-procedure 'idrop-while pred)
      (let-values (((head rest) (ispan pred l))) rest))

    ;; Deletion

    (define (idelete x l . opt)
      (let ((same (if (pair? opt) (car opt) equal?)))
        (check-procedure 'idelete same)
        (ifilter (lambda (y) (not (same x y))) l)))

    (define (idelete-duplicates l . opt)
      (let ((same (if (pair? opt) (car opt) equal?)))
        (check-procedure 'idelete-duplicates same)
        (let loop ((xs (elements 'idelete-duplicates l)) (kept '()))
          (cond ((null? xs) (rev->ilist kept '()))
                ((let seen ((k kept))
                   (and (pair? k) (or (same (car k) (car xs)) (seen (cdr k)))))
                 (loop (cdr xs) kept))
                (else (loop (cdr xs) (cons (car xs) kept)))))))

    ;; Immutable association lists

    (define (assoc-by who key al same)
      (check-procedure who same)
      (let loop ((t al))
        (cond ((ipair? t)
               (let ((entry (%icar t)))
                 (if (not (ipair? entry)) (fail who "an ilist of ipairs" al))
                 (if (same key (%icar entry)) entry (loop (%icdr t)))))
              (else (check-end who t) #f))))

    (define (iassoc key al . opt) (assoc-by 'iassoc key al (if (pair? opt) (car opt) equal?)))
    (define (iassq key al) (assoc-by 'iassq key al eq?))
    (define (iassv key al) (assoc-by 'iassv key al eqv?))

    (define (ialist-cons key datum al) (ipair (ipair key datum) al))

    (define (ialist-delete key al . opt)
      (let ((same (if (pair? opt) (car opt) equal?)))
        (check-procedure 'ialist-delete same)
        (ifilter (lambda (entry)
                   (if (not (ipair? entry)) (fail 'ialist-delete "an ilist of ipairs" al))
                   (not (same key (%icar entry))))
                 al)))

    ;; Replacement

    (define (replace-icar p x) (check-ipair 'replace-icar p) (ipair x (%icdr p)))
    (define (replace-icdr p x) (check-ipair 'replace-icdr p) (ipair (%icar p) x))

    ;; Conversion

    (define (pair->ipair p)
      (if (not (pair? p)) (fail 'pair->ipair "a pair" p))
      (ipair (car p) (cdr p)))

    (define (ipair->pair p)
      (check-ipair 'ipair->pair p)
      (cons (%icar p) (%icdr p)))

    (define (list->ilist l)
      (let loop ((x l) (acc '()))
        (if (pair? x) (loop (cdr x) (cons (car x) acc)) (rev->ilist acc x))))

    (define (ilist->list l)
      (let loop ((x l) (acc '()))
        (if (ipair? x)
            (loop (%icdr x) (cons (%icar x) acc))
            (let build ((acc acc) (out x))
              (if (null? acc) out (build (cdr acc) (cons (car acc) out)))))))

    (define (tree->itree x)
      (if (pair? x) (ipair (tree->itree (car x)) (tree->itree (cdr x))) x))

    (define (itree->tree x)
      (if (ipair? x) (cons (itree->tree (%icar x)) (itree->tree (%icdr x))) x))

    (define (gtree->itree x)
      (cond ((pair? x) (ipair (gtree->itree (car x)) (gtree->itree (cdr x))))
            ((ipair? x) (ipair (gtree->itree (%icar x)) (gtree->itree (%icdr x))))
            (else x)))

    (define (gtree->tree x)
      (cond ((pair? x) (cons (gtree->tree (car x)) (gtree->tree (cdr x))))
            ((ipair? x) (cons (gtree->tree (%icar x)) (gtree->tree (%icdr x))))
            (else x)))

    (define (iapply proc . args)
      (check-procedure 'iapply proc)
      (if (null? args) (error "iapply: expected an ilist of arguments"))
      (let ((r (reverse args)))
        (apply proc (append (reverse (cdr r)) (elements 'iapply (car r))))))

    ;; Comparators

    (define (check-comparator who c)
      (if (not (comparator? c)) (fail who "a comparator" c)))

    ;; Ipairs compared on the icar by car-cmp, then the icdr by cdr-cmp.
    (define (ipair-cmp car-cmp cdr-cmp)
      (make-comparator
       ipair?
       (lambda (a b) (and (=? car-cmp (%icar a) (%icar b)) (=? cdr-cmp (%icdr a) (%icdr b))))
       (lambda (a b)
         (or (<? car-cmp (%icar a) (%icar b))
             (and (=? car-cmp (%icar a) (%icar b)) (<? cdr-cmp (%icdr a) (%icdr b)))))
       (lambda (p . bound)
         (apply comparator-hash-function-of car-cmp cdr-cmp p bound))))

    (define (comparator-hash-function-of car-cmp cdr-cmp p . bound)
      (let ((h (+ (* 31 (comparator-hash car-cmp (%icar p))) (comparator-hash cdr-cmp (%icdr p)))))
        (if (pair? bound) (modulo h (car bound)) (modulo h 4294967291))))

    (define (make-ilist-comparator elt)
      (check-comparator 'make-ilist-comparator elt)
      (letrec ((cmp
                (make-comparator
                 proper-ilist?
                 (lambda (a b)
                   (let loop ((a a) (b b))
                     (cond ((null? a) (null? b))
                           ((null? b) #f)
                           (else (and (=? elt (%icar a) (%icar b)) (loop (%icdr a) (%icdr b)))))))
                 (lambda (a b)
                   (let loop ((a a) (b b))
                     (cond ((null? b) #f)
                           ((null? a) #t)
                           ((=? elt (%icar a) (%icar b)) (loop (%icdr a) (%icdr b)))
                           (else (<? elt (%icar a) (%icar b))))))
                 (lambda (l . bound)
                   (let loop ((l l) (h 17))
                     (if (null? l)
                         (if (pair? bound) (modulo h (car bound)) h)
                         (loop (%icdr l) (modulo (+ (* h 31) (comparator-hash elt (%icar l)))
                                                 4294967291))))))))
        cmp))

    (define (make-improper-ilist-comparator elt)
      (check-comparator 'make-improper-ilist-comparator elt)
      (letrec ((rank (lambda (x) (cond ((null? x) 0) ((ipair? x) 1) (else 2))))
               (same? (lambda (a b)
                        (let ((ra (rank a)))
                          (and (= ra (rank b))
                               (case ra
                                 ((0) #t)
                                 ((1) (and (same? (%icar a) (%icar b)) (same? (%icdr a) (%icdr b))))
                                 (else (=? elt a b)))))))
               (less? (lambda (a b)
                        (let ((ra (rank a)) (rb (rank b)))
                          (cond ((< ra rb) #t)
                                ((> ra rb) #f)
                                ((= ra 0) #f)
                                ((= ra 1)
                                 (or (less? (%icar a) (%icar b))
                                     (and (same? (%icar a) (%icar b)) (less? (%icdr a) (%icdr b)))))
                                (else (<? elt a b))))))
               (hash (lambda (x)
                       (case (rank x)
                         ((0) 5)
                         ((1) (modulo (+ (* 31 (hash (%icar x))) (hash (%icdr x))) 4294967291))
                         (else (comparator-hash elt x))))))
        (make-comparator (lambda (x) #t) same? less?
                         (lambda (x . bound)
                           (if (pair? bound) (modulo (hash x) (car bound)) (hash x))))))

    ;; Ipairs compared by one part (%icar or %icdr) with c.
    (define (part-comparator who part c)
      (check-comparator who c)
      (make-comparator ipair?
                       (lambda (a b) (=? c (part a) (part b)))
                       (lambda (a b) (<? c (part a) (part b)))
                       (lambda (p . bound)
                         (let ((h (comparator-hash c (part p))))
                           (if (pair? bound) (modulo h (car bound)) h)))))

    (define (make-icar-comparator c) (part-comparator 'make-icar-comparator %icar c))
    (define (make-icdr-comparator c) (part-comparator 'make-icdr-comparator %icdr c))

    (define ipair-comparator
      (ipair-cmp (make-default-comparator) (make-default-comparator)))

    (define ilist-comparator (make-ilist-comparator (make-default-comparator)))

    (define %loaded #t)))
