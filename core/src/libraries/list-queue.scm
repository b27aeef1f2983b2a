;; (scheme list-queue), also (srfi 117): queues as lists with a pointer to
;; the last pair, so adding at either end is O(1). `list-queue-list`
;; returns the queue's own list (SRFI 117 allows it), which later
;; changes of the queue may change.
(define-library (scheme list-queue)
  (export
   make-list-queue list-queue list-queue-copy list-queue-unfold
   list-queue-unfold-right list-queue? list-queue-empty? list-queue-front
   list-queue-back list-queue-list list-queue-first-last
   list-queue-add-front! list-queue-add-back! list-queue-remove-front!
   list-queue-remove-back! list-queue-remove-all! list-queue-set-list!
   list-queue-append list-queue-append! list-queue-concatenate
   list-queue-map list-queue-map! list-queue-for-each)
  (import (scheme base))
  (begin
    (define fail %expected)

    (define-record-type <list-queue>
      (%make-queue first last)
      list-queue?
      (first q-first set-q-first!)
      (last q-last set-q-last!))

    (define (check who q)
      (if (not (list-queue? q)) (fail who "a list queue" q)))

    (define check-list %check-list)

    (define (last-pair-of l)
      (if (null? l) '() (let loop ((l l)) (if (pair? (cdr l)) (loop (cdr l)) l))))

    ;; (make-list-queue LIST [LAST]): the queue takes LIST over.
    (define (make-list-queue l . last)
      (check-list 'make-list-queue l)
      (%make-queue l (if (pair? last) (car last) (last-pair-of l))))

    (define (list-queue . elements) (make-list-queue elements))

    (define (list-queue-copy q)
      (check 'list-queue-copy q)
      (make-list-queue (list-copy (q-first q))))

    (define (list-queue-empty? q)
      (check 'list-queue-empty? q)
      (null? (q-first q)))

    (define (list-queue-front q)
      (check 'list-queue-front q)
      (if (null? (q-first q)) (error "list-queue-front: the queue is empty" q))
      (car (q-first q)))

    (define (list-queue-back q)
      (check 'list-queue-back q)
      (if (null? (q-first q)) (error "list-queue-back: the queue is empty" q))
      (car (q-last q)))

    (define (list-queue-list q)
      (check 'list-queue-list q)
      (q-first q))

    (define (list-queue-first-last q)
      (check 'list-queue-first-last q)
      (values (q-first q) (q-last q)))

    (define (list-queue-add-front! q x)
      (check 'list-queue-add-front! q)
      (let ((cell (cons x (q-first q))))
        (if (null? (q-first q)) (set-q-last! q cell))
        (set-q-first! q cell)))

    (define (list-queue-add-back! q x)
      (check 'list-queue-add-back! q)
      (let ((cell (list x)))
        (if (null? (q-first q))
            (set-q-first! q cell)
            (set-cdr! (q-last q) cell))
        (set-q-last! q cell)))

    (define (list-queue-remove-front! q)
      (check 'list-queue-remove-front! q)
      (if (null? (q-first q)) (error "list-queue-remove-front!: the queue is empty" q))
      (let ((x (car (q-first q))))
        (set-q-first! q (cdr (q-first q)))
        (if (null? (q-first q)) (set-q-last! q '()))
        x))

    ;; O(n): the pair before the last is found from the front.
    (define (list-queue-remove-back! q)
      (check 'list-queue-remove-back! q)
      (if (null? (q-first q)) (error "list-queue-remove-back!: the queue is empty" q))
      (let ((x (car (q-last q))))
        (if (null? (cdr (q-first q)))
            (begin (set-q-first! q '()) (set-q-last! q '()))
            (let loop ((l (q-first q)))
              (if (eq? (cdr l) (q-last q))
                  (begin (set-cdr! l '()) (set-q-last! q l))
                  (loop (cdr l)))))
        x))

    (define (list-queue-remove-all! q)
      (check 'list-queue-remove-all! q)
      (let ((l (q-first q)))
        (set-q-first! q '())
        (set-q-last! q '())
        l))

    ;; (list-queue-set-list! Q LIST [LAST])
    (define (list-queue-set-list! q l . last)
      (check 'list-queue-set-list! q)
      (check-list 'list-queue-set-list! l)
      (set-q-first! q l)
      (set-q-last! q (if (pair? last) (car last) (last-pair-of l))))

    (define (list-queue-append . qs)
      (for-each (lambda (q) (check 'list-queue-append q)) qs)
      (make-list-queue (apply append (map (lambda (q) (list-copy (q-first q))) qs))))

    (define (list-queue-append! . qs)
      (for-each (lambda (q) (check 'list-queue-append! q)) qs)
      (apply list-queue-append qs))

    (define (list-queue-concatenate qs)
      (apply list-queue-append qs))

    (define (list-queue-map f q)
      (check 'list-queue-map q)
      (make-list-queue (map f (q-first q))))

    (define (list-queue-map! f q)
      (check 'list-queue-map! q)
      (let loop ((l (q-first q)))
        (if (pair? l)
            (begin (set-car! l (f (car l))) (loop (cdr l))))))

    (define (list-queue-for-each f q)
      (check 'list-queue-for-each q)
      (for-each f (q-first q)))

    ;; (list-queue-unfold STOP? MAPPER SUCCESSOR SEED [QUEUE]): the
    ;; elements made go in front of QUEUE's.
    (define (list-queue-unfold stop? mapper successor seed . queue)
      (let ((q (if (pair? queue) (car queue) (list-queue))))
        (check 'list-queue-unfold q)
        (let loop ((s seed) (acc '()))
          (if (stop? s)
              (begin (for-each (lambda (x) (list-queue-add-front! q x)) acc) q)
              (loop (successor s) (cons (mapper s) acc))))))

    ;; The same, the elements made go after QUEUE's, in reverse order.
    (define (list-queue-unfold-right stop? mapper successor seed . queue)
      (let ((q (if (pair? queue) (car queue) (list-queue))))
        (check 'list-queue-unfold-right q)
        (let loop ((s seed) (acc '()))
          (if (stop? s)
              (begin (for-each (lambda (x) (list-queue-add-back! q x)) acc) q)
              (loop (successor s) (cons (mapper s) acc))))))

    (define %loaded #t)))
