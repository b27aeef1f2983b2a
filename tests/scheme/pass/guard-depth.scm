;; guard costs O(1) to enter: nested guards to a depth of 100,000 run
;; under the default memory cap, with R7RS semantics (4.2.7, 6.11) kept:
;; clauses evaluated after unwinding, the re-raise of no matching clause
;; in the dynamic environment of the raise, dynamic-wind on the way out
;; and back in, full continuations that leave and re-enter a guard body.

(define (show . xs) (for-each display xs) (newline))

;; ---- depth ----------------------------------------------------------------

;; One guard per level, every body returning normally.
(define (nested n)
  (if (= n 0) 0 (guard (e (#t 'never)) (+ 1 (nested (- n 1))))))
(show "nested 100000: " (nested 100000))

;; A raise at the bottom, caught by the innermost guard (whose handler
;; captures a full continuation: the stack is copied once).
(define (nested-raise n)
  (if (= n 0)
      (raise 'bottom)
      (guard (e ((eq? e 'bottom) 0)) (+ 1 (nested-raise (- n 1))))))
(show "caught innermost at 10000: " (nested-raise 10000))

;; A raise at the bottom of 100,000 plain calls, caught by one guard at
;; the top (one handler continuation, of the whole stack).
(define (plain-raise n) (if (= n 0) (raise 'deep) (+ 1 (plain-raise (- n 1)))))
(show "caught at the top of 100000: " (guard (e ((symbol? e) (list 'top e))) (plain-raise 100000)))

;; A primitive's error at the bottom of 100,000 guards, caught by the
;; innermost (error objects come through the same handler stack).
(define (nested-car n)
  (if (= n 0)
      (car '())
      (guard (e ((error-object? e) 0)) (+ 1 (nested-car (- n 1))))))
(show "car error at 10000: " (nested-car 10000))

;; 100,000 shallow guards in a loop.
(define (guard-loop i acc)
  (if (= i 100000)
      acc
      (guard-loop (+ i 1) (+ acc (guard (e (#t 0)) 1)))))
(show "loop: " (guard-loop 0 0))

;; ---- re-raise through many levels -----------------------------------------

;; 500 guards, none of whose clauses matches: each re-raises in the
;; dynamic environment of the raise, to the next guard out.
(define tested 0)
(define (no-match n)
  (if (= n 0)
      (raise 'up)
      (guard (e ((begin (set! tested (+ tested 1)) (string? e)) 'wrong))
        (+ 1 (no-match (- n 1))))))
(let ((v (guard (e ((symbol? e) (list 'top e))) (no-match 500))))
  (show "re-raised to the top: " v " after " tested " clause tests"))

;; The same with else reached only at the outermost guard, and => clauses.
(define (arrows n)
  (if (= n 0)
      (raise (list (cons 'level n)))
      (guard (e ((assq 'other e) => cdr))
        (+ 1 (arrows (- n 1))))))
(show "=> at the top: " (guard (e ((assq 'level e) => cdr) (else 'else)) (arrows 500)))
(show "=> value: " (guard (e ((assq 'a e) => (lambda (p) (* 2 (cdr p))))) (raise (list (cons 'a 21)))))
(show "=> test only: " (guard (e ((assq 'b e))) (raise (list (cons 'b 23)))))
(show "else: " (guard (e ((string? e) 'str) (else (list 'else e))) (raise 5)))

;; ---- multiple values ------------------------------------------------------

(show "values from the body: " (call-with-values (lambda () (guard (e (#t 0)) (values 1 2 3))) list))
(show "values from a clause: "
      (call-with-values (lambda () (guard (e (#t (values 'a e))) (raise 'b))) list))
(show "no values: " (call-with-values (lambda () (guard (e (#t 0)) (values))) list))

;; ---- full continuations that leave and re-enter a guard body --------------

;; A generator: each call resumes the body where it left it; the body's
;; normal return, after it was left and re-entered twice, still leaves
;; the guard.
(define (make-gen raise-at-end?)
  (define return #f)
  (define resume #f)
  (define (yield v) (call/cc (lambda (k) (set! resume k) (return v))))
  (lambda ()
    (call/cc
     (lambda (r)
       (set! return r)
       (if resume
           (resume 'go)
           (let ((result (guard (e (#t (list 'caught e)))
                           (yield 1)
                           (yield 2)
                           (if raise-at-end? (raise 'at-end) 'body-done))))
             (set! resume (lambda (x) (return 'over)))
             (return (list 'finished result))))))))
(define (four g)
  (let* ((a (g)) (b (g)) (c (g)) (d (g)))
    (list a b c d)))
(show "generator: " (four (make-gen #f)))
(show "generator raising: " (four (make-gen #t)))

;; A continuation captured in a guard body, invoked after the guard
;; returned: the body runs again, and its return or raise leaves the
;; guard again.
(define (again)
  (let ((k #f) (n 0) (out '()))
    (let ((r (guard (e (#t (list 'caught e)))
               (call/cc (lambda (c) (set! k c)))
               (set! n (+ n 1))
               (if (= n 3) (raise 'third) n))))
      (set! out (cons r out))
      (if (< n 3) (k #f))
      (reverse out))))
(show "re-entered after the guard returned: " (again))

;; The same inside 1,000 nested guards.
(define (again-deep d)
  (if (= d 0) (again) (guard (e (#t 'outer)) (again-deep (- d 1)))))
(show "re-entered at depth 1000: " (again-deep 1000))

;; ---- dynamic-wind ----------------------------------------------------------

(define trace '())
(define (note x) (set! trace (cons x trace)))
(define (traced thunk)
  (set! trace '())
  (let ((v (thunk)))
    (show (reverse trace) " => " v)))
(define (wind name thunk)
  (dynamic-wind (lambda () (note (list 'before name)))
                thunk
                (lambda () (note (list 'after name)))))

(display "normal return: ")
(traced (lambda ()
          (guard (e (#t (note 'clause) 'caught))
            (wind 'a (lambda () (note 'body) 'value)))))
(display "matching clause: ")
(traced (lambda ()
          (guard (e (#t (note (list 'clause e)) 'caught))
            (wind 'a (lambda () (note 'body) (raise 'x) 'not-here)))))
(display "re-raise to an outer guard: ")
(traced (lambda ()
          (guard (e (#t (note (list 'outer-clause e)) 'outer))
            (wind 'outer
                  (lambda ()
                    (guard (e ((string? e) (note 'inner-clause) 'inner))
                      (wind 'inner (lambda () (raise 'x)))))))))
(display "re-raise, continuable, returning into the body: ")
(traced (lambda ()
          (with-exception-handler
           (lambda (c) (note (list 'handler c)) 10)
           (lambda ()
             (guard (e ((string? e) (note 'clause) 'str))
               (wind 'a (lambda () (+ 1 (raise-continuable 'c)))))))))

;; ---- guard and with-exception-handler -------------------------------------

(show "guard in a handler's thunk: "
      (with-exception-handler
       (lambda (c) 'outer-handler)
       (lambda () (guard (e (#t (list 'guard e))) (raise 'x)))))
(show "no clause, to the outer handler: "
      (call/cc
       (lambda (k)
         (with-exception-handler
          (lambda (c) (k (list 'handler c)))
          (lambda () (guard (e ((string? e) 'str)) (raise 'x)))))))
(show "handler inside a guard, raising: "
      (guard (e (#t (list 'guard e)))
        (with-exception-handler
         (lambda (c) (raise (list 'wrapped c)))
         (lambda () (raise 'x)))))
(show "handler inside a guard, continuable: "
      (guard (e (#t 'not-here))
        (with-exception-handler
         (lambda (c) 5)
         (lambda () (+ 1 (raise-continuable 'x))))))
(show "handler returning from raise, caught by the guard: "
      (guard (e ((error-object? e) 'secondary) (#t (list 'other e)))
        (with-exception-handler
         (lambda (c) 'returned)
         (lambda () (raise 'x)))))
(show "handlers after a guard caught: "
      (guard (e (#t (list 'outer e)))
        (guard (e (#t (list 'inner e))) (raise 1))
        (raise 2)))

;; raise-continuable through 500 guards with no matching clause, to a
;; handler outside them all, whose value returns into the deepest body.
(define (deep-continuable n)
  (if (= n 0)
      (+ 100 (raise-continuable 'more))
      (guard (e ((string? e) 'wrong)) (+ 1 (deep-continuable (- n 1))))))
(show "continuable through 500 guards: "
      (with-exception-handler (lambda (c) 10) (lambda () (deep-continuable 500))))

;; A guard in the handler of another guard's raise.
(show "guard in a clause: "
      (guard (e (#t (guard (e2 (#t (list 'inner e2))) (raise (list 'again e)))))
        (raise 'first)))

;; ---- an escape called after its extent ------------------------------------

;; guard's escape is %call/ec's. One kept past its call is an error when
;; called, raised before any after thunk runs: the guard around it sees
;; the error after leaving its own dynamic-wind, once.
(define kept (%call/ec (lambda (k) k)))
(display "escape after its extent: ")
(traced (lambda ()
          (guard (e ((error-object? e) (note 'caught) (error-object-message e)))
            (wind 'a (lambda () (kept 'late))))))
(show "escape within its extent: " (+ 1 (%call/ec (lambda (k) (* 10 (k 1))))))
