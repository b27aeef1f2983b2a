;; (scheme rlist): random-access lists (SRFI 101 under R7RS-large's
;; names, each with an `r`; `(srfi 101)` gives SRFI 101's own names).
;; A random-access pair is Okasaki's skew-binary list: a spine of
;; complete binary trees whose sizes are 2^k - 1, the two smallest
;; possibly equal, the rest strictly growing; the pair is the spine's
;; first node, `(rcar p)` the root of its tree and `(rcdr p)` the spine
;; with that root taken off. `rcons`, `rcar`, `rcdr` are O(1);
;; `rlist-ref`, `rlist-set`, `rlist-tail`, `rlength` and `make-rlist` are
;; O(log n). A tree of size 1 is its element; a bigger one is a vector
;; #(root left right). The last spine node's rest is the list's tail:
;; () for a proper list. `rquote` (syntax, in the prelude) quotes its
;; datum with random-access pairs.
(define-library (scheme rlist)
  (export
   rquote rpair? rcons rcar rcdr
   rcaar rcadr rcddr rcdar
   rcaaar rcaadr rcaddr rcadar rcdaar rcdadr rcdddr rcddar
   rcaaaar rcaaadr rcaaddr rcaadar rcadaar rcadadr rcadddr rcaddar
   rcdaaar rcdaadr rcdaddr rcdadar rcddaar rcddadr rcddddr rcdddar
   rnull? rlist? rlist make-rlist rlength rlength<=? rappend rreverse
   rlist-tail rlist-ref rlist-set rlist-ref/update rmap rfor-each
   rlist->list list->rlist)
  (import (scheme base))
  (begin
    (define fail %expected)

    (define-record-type <rpair>
      (make-rpair size tree rest)
      rpair?
      (size rp-size)
      (tree rp-tree)
      (rest rp-rest))

    (define (check-pair who p)
      (if (not (rpair? p)) (fail who "a random-access pair" p)))

    (define check-index %check-count)

    (define (root tree size) (if (= size 1) tree (vector-ref tree 0)))

    (define (rcons x d)
      (if (and (rpair? d) (rpair? (rp-rest d))
               (= (rp-size d) (rp-size (rp-rest d))))
          (let ((r (rp-rest d)))
            (make-rpair (+ 1 (* 2 (rp-size d)))
                        (vector x (rp-tree d) (rp-tree r))
                        (rp-rest r)))
          (make-rpair 1 x d)))

    (define (rcar p)
      (check-pair 'rcar p)
      (root (rp-tree p) (rp-size p)))

    (define (uncons p)
      ;; the spine without p's root
      (let ((s (rp-size p)))
        (if (= s 1)
            (rp-rest p)
            (let ((half (quotient s 2)) (t (rp-tree p)))
              (make-rpair half (vector-ref t 1)
                          (make-rpair half (vector-ref t 2) (rp-rest p)))))))

    (define (rcdr p)
      (check-pair 'rcdr p)
      (uncons p))

    (define (cxr who p)
      ;; rcaar to rcddddr: each follows the a's and d's of its own
      ;; name, from the innermost (rightmost) out.
      (let ((name (symbol->string who)))
        (do ((i (- (string-length name) 2) (- i 1))
             (x p (cond ((not (rpair? x)) (fail who "a random-access pair" x))
                        ((char=? (string-ref name i) #\a) (root (rp-tree x) (rp-size x)))
                        (else (uncons x)))))
            ((= i 1) x))))

    (define-syntax define-cxrs
      (syntax-rules () ((_ name ...) (begin (define (name p) (cxr 'name p)) ...))))
    (define-cxrs rcaar rcadr rcdar rcddr rcaaar rcaadr rcadar rcaddr rcdaar rcdadr rcddar rcdddr rcaaaar rcaaadr
      rcaadar rcaaddr rcadaar rcadadr rcaddar rcadddr rcdaaar rcdaadr rcdadar rcdaddr rcddaar rcddadr rcdddar rcddddr)

    (define (rnull? x) (null? x))

    ;; The spine's end: what follows its last node.
    (define (spine-end x)
      (if (rpair? x) (spine-end (rp-rest x)) x))

    (define (rlist? x) (null? (spine-end x)))

    (define (rlist . xs)
      (let loop ((r (reverse xs)) (acc '()))
        (if (null? r) acc (loop (cdr r) (rcons (car r) acc)))))

    (define (list->rlist l)
      (if (not (list? l)) (fail 'list->rlist "a proper list" l))
      (apply rlist l))

    (define (rlength l)
      (let loop ((x l) (n 0))
        (cond ((rpair? x) (loop (rp-rest x) (+ n (rp-size x))))
              ((null? x) n)
              (else (fail 'rlength "a random-access list" l)))))

    (define (rlength<=? x k)
      (check-index 'rlength<=? k)
      (let loop ((x x) (k k))
        (cond ((<= k 0) #t)
              ((rpair? x) (loop (rp-rest x) (- k (rp-size x))))
              (else #f))))

    ;; A complete tree of size s holding x everywhere (shared: O(log s)).
    (define (full-tree x s)
      (if (= s 1) x (let ((sub (full-tree x (quotient s 2)))) (vector x sub sub))))

    (define (make-rlist k . fill)
      (check-index 'make-rlist k)
      (let ((x (if (pair? fill) (car fill) 0)))
        ;; the sizes, largest first: greedily the largest 2^j - 1 left,
        ;; which leaves at most two equal (the smallest)
        (let loop ((k k) (sizes '()))
          (if (= k 0)
              ;; the spine is built from its end, the largest tree
              (let build ((r sizes) (acc '()))
                (if (null? r) acc (build (cdr r) (make-rpair (car r) (full-tree x (car r)) acc))))
              (let grow ((t 1))
                (if (<= (+ (* 2 t) 1) k)
                    (grow (+ (* 2 t) 1))
                    (loop (- k t) (append sizes (list t)))))))))

    ;; The elements of random-access list l, as a list, and its end.
    (define (elements l)
      (let loop ((x l) (acc '()))
        (if (rpair? x)
            (loop (uncons x) (cons (root (rp-tree x) (rp-size x)) acc))
            (values (reverse acc) x))))

    (define (proper-elements who l)
      (let-values (((xs end) (elements l)))
        (if (not (null? end)) (fail who "a random-access list" l))
        xs))

    (define (rlist->list l) (proper-elements 'rlist->list l))

    (define (rappend . ls)
      (if (null? ls)
          '()
          (let loop ((r (reverse ls)) (acc #f))
            (cond ((null? r) acc)
                  ((not acc) (loop (cdr r) (car r)))
                  (else
                   (loop (cdr r)
                         (let build ((xs (reverse (proper-elements 'rappend (car r)))) (acc acc))
                           (if (null? xs) acc (build (cdr xs) (rcons (car xs) acc))))))))))

    (define (rreverse l)
      (let loop ((xs (proper-elements 'rreverse l)) (acc '()))
        (if (null? xs) acc (loop (cdr xs) (rcons (car xs) acc)))))

    (define (rlist-tail l k)
      (check-index 'rlist-tail k)
      (let loop ((x l) (i k))
        (cond ((= i 0) x)
              ((not (rpair? x)) (error "rlist-tail: the list is too short" k))
              ((>= i (rp-size x)) (loop (rp-rest x) (- i (rp-size x))))
              (else (loop (uncons x) (- i 1))))))

    (define (tree-ref t s k)
      (cond ((= k 0) (root t s))
            (else
             (let ((half (quotient s 2)))
               (if (<= k half)
                   (tree-ref (vector-ref t 1) half (- k 1))
                   (tree-ref (vector-ref t 2) half (- k 1 half)))))))

    (define (tree-set t s k f)
      (cond ((= s 1) (f t))
            ((= k 0) (vector (f (vector-ref t 0)) (vector-ref t 1) (vector-ref t 2)))
            (else
             (let ((half (quotient s 2)))
               (if (<= k half)
                   (vector (vector-ref t 0) (tree-set (vector-ref t 1) half (- k 1) f) (vector-ref t 2))
                   (vector (vector-ref t 0) (vector-ref t 1) (tree-set (vector-ref t 2) half (- k 1 half) f)))))))

    ;; The spine node holding index k of l, and k within its tree.
    (define (locate who l k)
      (check-index who k)
      (let loop ((x l) (i k))
        (cond ((not (rpair? x))
               (error (string-append (symbol->string who) ": index out of range") k))
              ((< i (rp-size x)) (values x i))
              (else (loop (rp-rest x) (- i (rp-size x)))))))

    (define (rlist-ref l k)
      (let-values (((node i) (locate 'rlist-ref l k)))
        (tree-ref (rp-tree node) (rp-size node) i)))

    ;; l with its element k replaced by (f element).
    (define (update who l k f)
      (check-index who k)
      (let loop ((x l) (i k))
        (cond ((not (rpair? x))
               (error (string-append (symbol->string who) ": index out of range") k))
              ((< i (rp-size x))
               (make-rpair (rp-size x) (tree-set (rp-tree x) (rp-size x) i f) (rp-rest x)))
              (else (make-rpair (rp-size x) (rp-tree x) (loop (rp-rest x) (- i (rp-size x))))))))

    (define (rlist-set l k x) (update 'rlist-set l k (lambda (old) x)))

    (define (rlist-ref/update l k proc)
      (if (not (procedure? proc)) (fail 'rlist-ref/update "a procedure" proc))
      (let ((v (rlist-ref l k)))
        (values v (update 'rlist-ref/update l k proc))))

    (define (tree-map f t s)
      (if (= s 1)
          (f t)
          (let ((half (quotient s 2)))
            (vector (f (vector-ref t 0)) (tree-map f (vector-ref t 1) half) (tree-map f (vector-ref t 2) half)))))

    (define (same-lengths who ls)
      (let ((n (rlength (car ls))))
        (for-each (lambda (l)
                    (if (not (= (rlength l) n))
                        (error (string-append (symbol->string who) ": the lists differ in length")
                               n (rlength l))))
                  (cdr ls))))

    (define (rmap f l . ls)
      (if (not (procedure? f)) (fail 'rmap "a procedure" f))
      (if (null? ls)
          (let loop ((x l))
            (cond ((rpair? x) (make-rpair (rp-size x) (tree-map f (rp-tree x) (rp-size x)) (loop (rp-rest x))))
                  ((null? x) '())
                  (else (fail 'rmap "a random-access list" l))))
          (let ((all (cons l ls)))
            (same-lengths 'rmap all)
            (apply rlist (apply map f (map (lambda (l) (proper-elements 'rmap l)) all))))))

    (define (rfor-each f l . ls)
      (if (not (procedure? f)) (fail 'rfor-each "a procedure" f))
      (let ((all (cons l ls)))
        (if (pair? ls) (same-lengths 'rfor-each all))
        (apply for-each f (map (lambda (l) (proper-elements 'rfor-each l)) all))))

    ;; A datum with its pairs made random-access pairs (for `rquote`).
    (define (%rlist-datum d)
      (if (pair? d) (rcons (%rlist-datum (car d)) (%rlist-datum (cdr d))) d))

    (define %loaded #t)))
