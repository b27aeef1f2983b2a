;; First-class, re-entrant continuations.
(display (call/cc (lambda (k) (+ 1 (k 42))))) (newline)
;; re-entering a continuation several times
(let ()
  (define saved #f)
  (define count 0)
  (define result '())
  (set! result (cons (call/cc (lambda (k) (set! saved k) 0)) result))
  (set! count (+ count 1))
  (if (< count 3) (saved count))
  (write result) (newline))
;; generators by re-entry
(define (make-gen lst)
  (define return #f)
  (define resume #f)
  (lambda ()
    (call/cc
     (lambda (r)
       (set! return r)
       (if resume
           (resume #f)
           (begin
             (for-each (lambda (x) (call/cc (lambda (k) (set! resume k) (return x)))) lst)
             (return 'done)))))))
(define g (make-gen '(a b c)))
(display (list (g) (g) (g) (g) (g))) (newline)
(display (+ 1 (call-with-current-continuation (lambda (k) (dynamic-wind (lambda () #f) (lambda () (k 10)) (lambda () #f)))))) (newline)
(write (call-with-values (lambda () (call/cc (lambda (k) (k 1 2 3)))) list)) (newline)
