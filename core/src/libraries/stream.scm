;; (scheme stream), also (srfi 41): lazy streams. A stream is a record
;; holding an R7RS promise whose value is () for the null stream or a
;; stream pair: a promise of the element and the rest stream. Streams
;; are built with `delay-force`, so a long run of suspensions (a filter
;; that skips many elements, a `stream-let` loop) is forced iteratively,
;; in constant space. The syntax (`stream-cons`, `stream-lambda`,
;; `define-stream`, `stream`, `stream-let`, `stream-match`, `stream-of`)
;; is in the prelude and calls `%stream-cons` and `%stream-lazy` here,
;; which take thunks.
(define-library (scheme stream)
  (export
   stream-null stream-cons stream? stream-null? stream-pair? stream-car
   stream-cdr stream-lambda
   define-stream list->stream port->stream stream stream->list
   stream-append stream-concat stream-constant stream-drop
   stream-drop-while stream-filter stream-fold stream-for-each stream-from
   stream-iterate stream-length stream-let stream-map stream-match
   stream-of stream-range stream-ref stream-reverse stream-scan
   stream-take stream-take-while stream-unfold stream-unfolds stream-zip)
  (import (scheme base) (scheme lazy))
  (begin
    (define fail %expected)

    (define-record-type <stream>
      (make-stream promise)
      stream?
      (promise stream-promise))

    (define-record-type <stream-pair>
      (make-stream-pair kar kdr)
      stream-pair-record?
      (kar stream-pair-kar)
      (kdr stream-pair-kdr))

    (define stream-null (make-stream (make-promise '())))

    ;; The promise of the stream a suspended expression returns.
    (define (promise-of who s)
      (if (not (stream? s)) (fail who "a stream" s))
      (stream-promise s))

    ;; A stream whose value is the stream (thunk) returns, when needed.
    (define (%stream-lazy thunk)
      (make-stream (delay-force (promise-of 'stream-lambda (thunk)))))

    ;; A stream pair of the element (a) and the stream (d), both
    ;; evaluated when needed.
    (define (%stream-cons a d)
      (make-stream (make-promise (make-stream-pair (delay (a)) (%stream-lazy d)))))

    ;; A stream pair of value x (already evaluated) and the stream (d).
    (define (scons x d)
      (make-stream (make-promise (make-stream-pair (make-promise x) (%stream-lazy d)))))

    (define (lazy thunk) (%stream-lazy thunk))

    (define (check who s)
      (if (not (stream? s)) (fail who "a stream" s)))

    (define check-procedure %check-procedure)

    (define check-count %check-count)

    (define (value s) (force (stream-promise s)))

    (define (stream-pair? x) (and (stream? x) (stream-pair-record? (value x))))
    (define (stream-null? x) (and (stream? x) (null? (value x))))

    (define (the-pair who s)
      (check who s)
      (let ((v (value s)))
        (if (not (stream-pair-record? v)) (fail who "a non-null stream" s))
        v))

    (define (stream-car s) (force (stream-pair-kar (the-pair 'stream-car s))))
    (define (stream-cdr s) (stream-pair-kdr (the-pair 'stream-cdr s)))

    ;; `stream-match` with no matching clause.
    (define (%stream-match-fail s)
      (error "stream-match: no pattern matches the stream" s))

    ;; Derived procedures

    (define (list->stream l)
      (if (not (list? l)) (fail 'list->stream "a proper list" l))
      (let loop ((l l))
        (lazy (lambda ()
                (if (null? l) stream-null (scons (car l) (lambda () (loop (cdr l)))))))))

    (define (port->stream . port)
      (let ((p (if (pair? port) (car port) (current-input-port))))
        (if (not (and (input-port? p) (textual-port? p)))
            (fail 'port->stream "a textual input port" p))
        (let loop ()
          (lazy (lambda ()
                  (let ((c (read-char p)))
                    (if (eof-object? c) stream-null (scons c loop))))))))

    (define (stream->list . args)
      (let-values (((n s)
                    (cond ((and (pair? args) (pair? (cdr args)) (null? (cddr args)))
                           (check-count 'stream->list (car args))
                           (values (car args) (cadr args)))
                          ((and (pair? args) (null? (cdr args))) (values #f (car args)))
                          (else (error "stream->list: expected ([n] stream)" args)))))
        (check 'stream->list s)
        (let loop ((s s) (n n) (acc '()))
          (if (or (and n (= n 0)) (stream-null? s))
              (reverse acc)
              (loop (stream-cdr s) (and n (- n 1)) (cons (stream-car s) acc))))))

    (define (stream-append . ss)
      (for-each (lambda (s) (check 'stream-append s)) ss)
      (let outer ((ss ss))
        (lazy (lambda ()
                (cond ((null? ss) stream-null)
                      ((null? (cdr ss)) (car ss))
                      (else
                       (let inner ((s (car ss)))
                         (if (stream-null? s)
                             (outer (cdr ss))
                             (make-stream
                              (make-promise
                               (make-stream-pair (stream-pair-kar (value s))
                                                 (lazy (lambda () (inner (stream-cdr s)))))))))))))))

    (define (stream-concat ss)
      (check 'stream-concat ss)
      (let outer ((ss ss))
        (lazy (lambda ()
                (if (stream-null? ss)
                    stream-null
                    (let ((s (stream-car ss)))
                      (check 'stream-concat s)
                      (let inner ((s s))
                        (if (stream-null? s)
                            (outer (stream-cdr ss))
                            (make-stream
                             (make-promise
                              (make-stream-pair (stream-pair-kar (value s))
                                                (lazy (lambda () (inner (stream-cdr s)))))))))))))))

    (define (stream-constant . objs)
      (if (null? objs)
          stream-null
          (let loop ((l objs))
            (lazy (lambda ()
                    (scons (car l) (lambda () (loop (if (null? (cdr l)) objs (cdr l))))))))))

    (define (stream-drop n s)
      (check-count 'stream-drop n)
      (check 'stream-drop s)
      (let loop ((n n) (s s))
        (lazy (lambda ()
                (if (or (= n 0) (stream-null? s)) s (loop (- n 1) (stream-cdr s)))))))

    (define (stream-drop-while pred s)
      (check-procedure 'stream-drop-while pred)
      (check 'stream-drop-while s)
      (let loop ((s s))
        (lazy (lambda ()
                (if (and (stream-pair? s) (pred (stream-car s))) (loop (stream-cdr s)) s)))))

    (define (stream-filter pred s)
      (check-procedure 'stream-filter pred)
      (check 'stream-filter s)
      (let loop ((s s))
        (lazy (lambda ()
                (cond ((stream-null? s) stream-null)
                      ((pred (stream-car s))
                       (scons (stream-car s) (lambda () (loop (stream-cdr s)))))
                      (else (loop (stream-cdr s))))))))

    (define (stream-fold proc base s)
      (check-procedure 'stream-fold proc)
      (check 'stream-fold s)
      (let loop ((acc base) (s s))
        (if (stream-null? s) acc (loop (proc acc (stream-car s)) (stream-cdr s)))))

    (define (stream-for-each proc s . ss)
      (check-procedure 'stream-for-each proc)
      (let ((all (cons s ss)))
        (for-each (lambda (s) (check 'stream-for-each s)) all)
        (let loop ((all all))
          (if (not (find-null all))
              (begin (apply proc (map stream-car all))
                     (loop (map stream-cdr all)))))))

    (define (find-null ss)
      (and (pair? ss) (or (stream-null? (car ss)) (find-null (cdr ss)))))

    (define (check-number who x)
      (if (not (number? x)) (fail who "a number" x)))

    (define (stream-from first . step)
      (check-number 'stream-from first)
      (let ((step (if (pair? step) (car step) 1)))
        (check-number 'stream-from step)
        (let loop ((x first))
          (lazy (lambda () (scons x (lambda () (loop (+ x step)))))))))

    (define (stream-iterate proc base)
      (check-procedure 'stream-iterate proc)
      (let loop ((x base))
        (lazy (lambda () (scons x (lambda () (loop (proc x))))))))

    (define (stream-length s)
      (check 'stream-length s)
      (let loop ((s s) (n 0))
        (if (stream-null? s) n (loop (stream-cdr s) (+ n 1)))))

    (define (stream-map proc s . ss)
      (check-procedure 'stream-map proc)
      (let ((all (cons s ss)))
        (for-each (lambda (s) (check 'stream-map s)) all)
        (let loop ((all all))
          (lazy (lambda ()
                  (if (find-null all)
                      stream-null
                      (%stream-cons (lambda () (apply proc (map stream-car all)))
                                    (lambda () (loop (map stream-cdr all))))))))))

    (define (stream-range first past . step)
      (check-number 'stream-range first)
      (check-number 'stream-range past)
      (let* ((step (if (pair? step) (car step) (if (< first past) 1 -1)))
             (more? (if (< 0 step) (lambda (x) (< x past)) (lambda (x) (> x past)))))
        (check-number 'stream-range step)
        (let loop ((x first))
          (lazy (lambda ()
                  (if (more? x) (scons x (lambda () (loop (+ x step)))) stream-null))))))

    (define (stream-ref s n)
      (check 'stream-ref s)
      (check-count 'stream-ref n)
      (let loop ((t s) (k n))
        (cond ((stream-null? t) (error "stream-ref: the stream is shorter than the index" n))
              ((= k 0) (stream-car t))
              (else (loop (stream-cdr t) (- k 1))))))

    (define (stream-reverse s)
      (check 'stream-reverse s)
      (lazy (lambda ()
              (let loop ((s s) (acc stream-null))
                (if (stream-null? s)
                    acc
                    (loop (stream-cdr s)
                          (make-stream (make-promise (make-stream-pair (stream-pair-kar (value s)) acc)))))))))

    (define (stream-scan proc base s)
      (check-procedure 'stream-scan proc)
      (check 'stream-scan s)
      (let loop ((acc base) (s s))
        (lazy (lambda ()
                (if (stream-null? s)
                    (scons acc (lambda () stream-null))
                    (scons acc (lambda () (loop (proc acc (stream-car s)) (stream-cdr s)))))))))

    (define (stream-take n s)
      (check-count 'stream-take n)
      (check 'stream-take s)
      (let loop ((n n) (s s))
        (lazy (lambda ()
                (if (or (= n 0) (stream-null? s))
                    stream-null
                    (make-stream
                     (make-promise
                      (make-stream-pair (stream-pair-kar (value s))
                                        (lazy (lambda () (loop (- n 1) (stream-cdr s))))))))))))

    (define (stream-take-while pred s)
      (check-procedure 'stream-take-while pred)
      (check 'stream-take-while s)
      (let loop ((s s))
        (lazy (lambda ()
                (if (and (stream-pair? s) (pred (stream-car s)))
                    (scons (stream-car s) (lambda () (loop (stream-cdr s))))
                    stream-null)))))

    (define (stream-unfold mapper pred gen base)
      (check-procedure 'stream-unfold mapper)
      (check-procedure 'stream-unfold pred)
      (check-procedure 'stream-unfold gen)
      (let loop ((x base))
        (lazy (lambda ()
                (if (pred x)
                    (scons (mapper x) (lambda () (loop (gen x))))
                    stream-null)))))

    ;; (stream-unfolds proc seed): proc returns the next seed and one
    ;; result per stream: (value ...) for elements, #f for none this
    ;; time, () for the end of that stream.
    (define (stream-unfolds proc seed)
      (check-procedure 'stream-unfolds proc)
      ;; a stream of the lists of the values proc returns, one per call
      (define results
        (let loop ((seed seed))
          (lazy (lambda ()
                  (call-with-values (lambda () (proc seed))
                    (lambda (next . rs)
                      (scons rs (lambda () (loop next)))))))))
      (define n (length (stream-car results)))
      (define (nth i)
        (let loop ((rs results))
          (lazy (lambda ()
                  (let ((r (list-ref (stream-car rs) i)))
                    (cond ((not r) (loop (stream-cdr rs)))
                          ((null? r) stream-null)
                          ((pair? r)
                           (let emit ((vs r))
                             (if (null? (cdr vs))
                                 (scons (car vs) (lambda () (loop (stream-cdr rs))))
                                 (scons (car vs) (lambda () (emit (cdr vs)))))))
                          (else (fail 'stream-unfolds "a list or #f as a result" r))))))))
      (let build ((i (- n 1)) (acc '()))
        (if (< i 0) (apply values acc) (build (- i 1) (cons (nth i) acc)))))

    (define (stream-zip s . ss)
      (let ((all (cons s ss)))
        (for-each (lambda (s) (check 'stream-zip s)) all)
        (let loop ((all all))
          (lazy (lambda ()
                  (if (find-null all)
                      stream-null
                      (%stream-cons (lambda () (map stream-car all))
                                    (lambda () (loop (map stream-cdr all))))))))))

    (define %loaded #t)))
