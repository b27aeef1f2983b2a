;; dynamic-wind composes with call/cc: escaping and re-entering run the thunks.
(define trail '())
(define (note x) (set! trail (cons x trail)))
(define k2 #f)
(dynamic-wind
  (lambda () (note 'in))
  (lambda () (call/cc (lambda (k) (set! k2 k))) (note 'body))
  (lambda () (note 'out)))
(if (< (length trail) 6) (k2 #f))
(write (reverse trail)) (newline)
(set! trail '())
(call/cc (lambda (escape)
  (dynamic-wind
    (lambda () (note 'a-in))
    (lambda () (dynamic-wind (lambda () (note 'b-in)) (lambda () (escape 0)) (lambda () (note 'b-out))))
    (lambda () (note 'a-out)))))
(write (reverse trail)) (newline)
