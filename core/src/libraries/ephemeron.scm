;; (scheme ephemeron), also (srfi 124): ephemerons, with a limitation: the
;; engine's collector has no weak references, so an ephemeron holds its key
;; and datum strongly and is never broken. A program written for weak keys
;; runs and gets the same answers, but keeps alive what it points to.
(define-library (scheme ephemeron)
  (export make-ephemeron ephemeron? ephemeron-broken? ephemeron-key
          ephemeron-datum reference-barrier)
  (import (scheme base))
  (begin
    (define-record-type <ephemeron> (make-ephemeron key datum) ephemeron?
      (key %key) (datum %datum))

    (define (check who e)
      (if (not (ephemeron? e))
          (error (string-append (symbol->string who) ": expected an ephemeron") e)))

    (define (ephemeron-broken? e) (check 'ephemeron-broken? e) #f)
    (define (ephemeron-key e) (check 'ephemeron-key e) (%key e))
    (define (ephemeron-datum e) (check 'ephemeron-datum e) (%datum e))

    ;; Keeps its argument alive up to this call; every reference is strong.
    (define (reference-barrier key) (if #f #f))

    (define %loaded #t)))
