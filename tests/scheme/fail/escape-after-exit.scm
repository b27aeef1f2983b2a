;; An escape-only continuation (what guard enters a guard with) works
;; only while the frame of its %call/ec call is on the stack: called
;; later, it is an error at the call.
(define saved (%call/ec (lambda (k) k)))
(display (%call/ec (lambda (k) (+ 1 (k 41)))))
(define (later) (saved 'too-late))
(later)
