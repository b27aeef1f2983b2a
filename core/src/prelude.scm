;;; The Arbores prelude: the parts of R7RS best written in Scheme itself.
;;; Compiled once when an engine starts; its procedures are hidden from
;;; backtraces. Names starting with % are the engine's own primitives.

;; ---- dynamic state: winders, handlers, continuations -----------------------

(define (dynamic-wind before thunk after)
  (%check-procedure 'dynamic-wind before)
  (%check-procedure 'dynamic-wind thunk)
  (%check-procedure 'dynamic-wind after)
  (before)
  (%set-winders! (cons (cons before after) (%winders)))
  (%apply-values
   (lambda results
     (%set-winders! (cdr (%winders)))
     (after)
     (apply values results))
   (thunk)))

;; Runs the after thunks of the winders being left and the before thunks of
;; those being entered, innermost first on the way out, outermost first in.
(define (%wind-to target)
  (let* ((current (%winders))
         (common (%common-tail current target)))
    (let leave ((ws current))
      (if (not (eq? ws common))
          (begin
            (%set-winders! (cdr ws))
            ((cdar ws))
            (leave (cdr ws)))))
    (let enter ((ws target))
      (if (not (eq? ws common))
          (begin
            (enter (cdr ws))
            ((caar ws))
            (%set-winders! ws))))))

(define (%common-tail a b)
  (let ((la (length a)) (lb (length b)))
    (let loop ((a (if (> la lb) (list-tail a (- la lb)) a))
               (b (if (> lb la) (list-tail b (- lb la)) b)))
      (if (eq? a b) a (loop (cdr a) (cdr b))))))

;; Called by the VM when a continuation is invoked from under other winders.
(define (%invoke-continuation k vals)
  (%wind-to (%continuation-winders k))
  (%throw k vals))

(define (call-with-values producer consumer)
  (%check-procedure 'call-with-values producer)
  (%check-procedure 'call-with-values consumer)
  (%apply-values consumer (producer)))

;; ---- exceptions -------------------------------------------------------------

(define (with-exception-handler handler thunk)
  (if (not (procedure? handler))
      (error "with-exception-handler: expected a procedure, got" handler))
  (let ((old (%handlers)))
    (%set-handlers! (cons handler old))
    (%apply-values
     (lambda results (%set-handlers! old) (apply values results))
     (thunk))))

(define (raise obj)
  (let ((hs (%handlers)))
    (if (null? hs)
        (%abort obj)
        (begin
          (%set-handlers! (cdr hs))
          ((car hs) obj)
          ;; A handler returned from a non-continuable raise: that is an
          ;; error, raised in the handler's dynamic environment.
          (raise (%make-secondary-error obj))))))

(define (%make-secondary-error obj)
  (call/cc
   (lambda (k)
     (%set-handlers! (cons (lambda (e) (k e)) (%handlers)))
     (error "handler returned from a non-continuable raise of" obj))))

(define (raise-continuable obj)
  (let ((hs (%handlers)))
    (if (null? hs)
        (%abort obj)
        (begin
          (%set-handlers! (cdr hs))
          (%apply-values
           (lambda results (%set-handlers! hs) (apply values results))
           ((car hs) obj))))))

;; R7RS's reference expansion, but for `guard-k`: an escape-only
;; continuation (`%call/ec`), which records where the guard's frame is
;; instead of copying the stack, so entering a guard costs O(1) and
;; nested guards O(depth), where a full continuation per guard cost
;; O(depth^2). It is only ever invoked while the guard's frame is on the
;; stack: from the handler (called deeper, in the raise's dynamic
;; environment) and at the body's normal return, also when a full
;; continuation brought the body back (its copy of the stack holds the
;; frame). `handler-k`, needed for the re-raise when no clause matches,
;; stays a full continuation: it is captured only when something is
;; raised.
(define-syntax guard
  (syntax-rules ()
    ((guard (var clause ...) e1 e2 ...)
     ((%call/ec
       (lambda (guard-k)
         (with-exception-handler
          (lambda (condition)
            ((call/cc
              (lambda (handler-k)
                (guard-k
                 (lambda ()
                   (let ((var condition))
                     (%guard-aux
                      (handler-k
                       (lambda ()
                         (raise-continuable condition)))
                      clause ...))))))))
          (lambda ()
            (call-with-values
             (lambda () e1 e2 ...)
             (lambda args
               (guard-k
                (lambda ()
                  (apply values args)))))))))))))

(define-syntax %guard-aux
  (syntax-rules (else =>)
    ((%guard-aux reraise (else result1 result2 ...))
     (begin result1 result2 ...))
    ((%guard-aux reraise (test => result))
     (let ((temp test))
       (if temp (result temp) reraise)))
    ((%guard-aux reraise (test => result) clause1 clause2 ...)
     (let ((temp test))
       (if temp (result temp) (%guard-aux reraise clause1 clause2 ...))))
    ((%guard-aux reraise (test))
     (or test reraise))
    ((%guard-aux reraise (test) clause1 clause2 ...)
     (let ((temp test))
       (if temp temp (%guard-aux reraise clause1 clause2 ...))))
    ((%guard-aux reraise (test result1 result2 ...))
     (if test (begin result1 result2 ...) reraise))
    ((%guard-aux reraise (test result1 result2 ...) clause1 clause2 ...)
     (if test (begin result1 result2 ...) (%guard-aux reraise clause1 clause2 ...)))))

;; ---- multiple values ----------------------------------------------------------

;; R7RS 7.3's definition: every init is evaluated where the let-values
;; stands (none sees another binding's variables), into temporaries the
;; variables are bound to at the end.
(define-syntax let-values
  (syntax-rules ()
    ((_ (binding ...) body0 body1 ...)
     (let-values "bind" (binding ...) () (body0 body1 ...)))
    ((_ "bind" () tmps body)
     (let tmps (let () . body)))
    ((_ "bind" ((b0 e0) binding ...) tmps body)
     (let-values "mktmp" b0 e0 () (binding ...) tmps body))
    ((_ "mktmp" () e0 args bindings tmps body)
     (call-with-values
         (lambda () e0)
       (lambda args (let-values "bind" bindings tmps body))))
    ((_ "mktmp" (a . b) e0 (arg ...) bindings (tmp ...) body)
     (let-values "mktmp" b e0 (arg ... x) bindings (tmp ... (a x)) body))
    ((_ "mktmp" a e0 (arg ...) bindings (tmp ...) body)
     (call-with-values
         (lambda () e0)
       (lambda (arg ... . x) (let-values "bind" bindings (tmp ... (a x)) body))))))

(define-syntax let*-values
  (syntax-rules ()
    ((_ () body0 body1 ...) (let () body0 body1 ...))
    ((_ (binding0 binding1 ...) body0 body1 ...)
     (let-values (binding0) (let*-values (binding1 ...) body0 body1 ...)))))

(define-syntax define-values
  (syntax-rules ()
    ((_ () expr) (define %unused (call-with-values (lambda () expr) (lambda args #f))))
    ((_ (var) expr) (define var expr))
    ((_ (var0 var1 ... varn) expr)
     (begin
       (define var0 (call-with-values (lambda () expr) list))
       (define var1 (let ((v (cadr var0))) (set-cdr! var0 (cddr var0)) v)) ...
       (define varn (let ((v (cadr var0))) (set! var0 (car var0)) v))))
    ((_ (var0 var1 ... . var-rest) expr)
     (begin
       (define var0 (call-with-values (lambda () expr) list))
       (define var1 (let ((v (cadr var0))) (set-cdr! var0 (cddr var0)) v)) ...
       (define var-rest (let ((v (cdr var0))) (set! var0 (car var0)) v))))
    ((_ var expr) (define var (call-with-values (lambda () expr) list)))))

(define-syntax receive
  (syntax-rules ()
    ((_ formals expr body ...)
     (call-with-values (lambda () expr) (lambda formals body ...)))))

;; ---- parameters ---------------------------------------------------------------

(define (make-parameter value . conv)
  (let ((converter (if (pair? conv) (car conv) #f)))
    (if (pair? conv) (%check-procedure 'make-parameter converter))
    (%make-parameter (if converter (converter value) value) converter)))

(define (%parameterize params values thunk)
  (let* ((new (map (lambda (p v)
                     (if (not (%parameter? p))
                         (error "parameterize: not a parameter object" p))
                     (let ((conv (%parameter-converter p)))
                       (if conv (conv v) v)))
                   params values))
         (old #f))
    (dynamic-wind
     (lambda ()
       (set! old (map %parameter-value params))
       (for-each %parameter-set! params new))
     thunk
     (lambda ()
       (set! new (map %parameter-value params))
       (for-each %parameter-set! params old)))))

(define-syntax parameterize
  (syntax-rules ()
    ((_ ((param value) ...) body0 body1 ...)
     (%parameterize (list param ...) (list value ...) (lambda () body0 body1 ...)))))

;; ---- promises -----------------------------------------------------------------

(define (force promise)
  (if (promise? promise)
      (let loop ()
        (if (%promise-done? promise)
            (%promise-value promise)
            (let ((next ((%promise-value promise))))
              (if (not (%promise-done? promise))
                  (%promise-update! promise next))
              (loop))))
      promise))

;; ---- lists --------------------------------------------------------------------

(define (caar x) (car (car x)))
(define (cadr x) (car (cdr x)))
(define (cdar x) (cdr (car x)))
(define (cddr x) (cdr (cdr x)))
(define (caaar x) (car (car (car x))))
(define (caadr x) (car (car (cdr x))))
(define (cadar x) (car (cdr (car x))))
(define (caddr x) (car (cdr (cdr x))))
(define (cdaar x) (cdr (car (car x))))
(define (cdadr x) (cdr (car (cdr x))))
(define (cddar x) (cdr (cdr (car x))))
(define (cdddr x) (cdr (cdr (cdr x))))
(define (caaaar x) (car (car (car (car x)))))
(define (caaadr x) (car (car (car (cdr x)))))
(define (caadar x) (car (car (cdr (car x)))))
(define (caaddr x) (car (car (cdr (cdr x)))))
(define (cadaar x) (car (cdr (car (car x)))))
(define (cadadr x) (car (cdr (car (cdr x)))))
(define (caddar x) (car (cdr (cdr (car x)))))
(define (cadddr x) (car (cdr (cdr (cdr x)))))
(define (cdaaar x) (cdr (car (car (car x)))))
(define (cdaadr x) (cdr (car (car (cdr x)))))
(define (cdadar x) (cdr (car (cdr (car x)))))
(define (cdaddr x) (cdr (car (cdr (cdr x)))))
(define (cddaar x) (cdr (cdr (car (car x)))))
(define (cddadr x) (cdr (cdr (car (cdr x)))))
(define (cdddar x) (cdr (cdr (cdr (car x)))))
(define (cddddr x) (cdr (cdr (cdr (cdr x)))))

(define (member x lst . pred)
  (if (null? pred)
      (%member x lst)
      (let ((same? (car pred)))
        (%check-procedure 'member same?)
        (let loop ((l lst))
          (cond ((pair? l) (if (same? x (car l)) l (loop (cdr l))))
                ((null? l) #f)
                (else (%expected 'member "a proper list" lst)))))))

(define (assoc x alist . pred)
  (if (null? pred)
      (%assoc x alist)
      (let ((same? (car pred)))
        (%check-procedure 'assoc same?)
        (let loop ((l alist))
          (cond ((and (pair? l) (pair? (car l)))
                 (if (same? x (caar l)) (car l) (loop (cdr l))))
                ((null? l) #f)
                (else (%expected 'assoc "an association list" alist)))))))

;; The errors of the bundled libraries for an argument of the wrong kind:
;; "WHO: expected WHAT", the argument as the irritant.
(define (%expected who what got)
  (error (string-append (symbol->string who) ": expected " what) got))

(define (%check-procedure who p)
  (if (not (procedure? p)) (%expected who "a procedure" p)))

(define (%check-count who k)
  (if (not (and (exact-integer? k) (>= k 0)))
      (%expected who "a non-negative exact integer" k)))

(define (%check-list who l)
  (if (not (list? l)) (%expected who "a proper list" l)))

(define (%check-vector who v)
  (if (not (vector? v)) (%expected who "a vector" v)))

;; START and END of the optional arguments `opt` for vector `v`.
(define (%vector-range who v opt)
  (let* ((n (vector-length v))
         (start (if (pair? opt) (car opt) 0))
         (end (if (and (pair? opt) (pair? (cdr opt))) (cadr opt) n)))
    (if (not (and (exact-integer? start) (exact-integer? end)
                  (<= 0 start end n)))
        (error (string-append (symbol->string who)
                              ": the range is out of bounds for the vector")
               (list start end) n))
    (values start end)))

;; The next value of each generator (a thunk), or #f when one has ended.
(define (%next-all gens)
  (let loop ((gs gens) (acc '()))
    (if (null? gs)
        (reverse acc)
        (let ((v ((car gs))))
          (and (not (eof-object? v)) (loop (cdr gs) (cons v acc)))))))

;; Hash `h` within the optional `bound`, a positive exact integer.
(define (%hash-bounded who h bound)
  (cond ((null? bound) h)
        ((and (exact-integer? (car bound)) (> (car bound) 0))
         (modulo h (car bound)))
        (else (%expected who "a positive exact integer bound" (car bound)))))

(define (%cars lists)
  (if (null? lists) '()
      (if (null? (car lists)) #f
          (let ((rest (%cars (cdr lists))))
            (and rest (cons (caar lists) rest))))))

(define (%cdrs lists)
  (if (null? lists) '() (cons (cdar lists) (%cdrs (cdr lists)))))

;; `map` of one list: each value consed onto the map of the rest as the
;; recursion returns (one pair per element, none ever changed, so a
;; continuation captured in `f` and entered again leaves every list it
;; returned before as it was). Past `depth` elements (1000 from `map`)
;; the rest is mapped by a loop that conses in reverse, then `reverse`s:
;; the stack stays bounded on a long list, and a capture in `f` copies at
;; most that many frames of `map`'s.
(define (%map1 f l depth)
  (if (pair? l)
      (if (eq? depth 0)
          (let loop ((l l) (acc '()))
            (if (pair? l)
                (loop (cdr l) (cons (f (car l)) acc))
                (reverse acc)))
          (let ((v (f (car l))))
            (cons v (%map1 f (cdr l) (- depth 1)))))
      '()))

(define (map f first . rest)
  (%check-procedure 'map f)
  (%check-lists 'map first rest)
  (if (null? rest)
      (%map1 f first 1000)
      (let loop ((ls (cons first rest)) (acc '()))
        (let ((cars (%cars ls)))
          (if cars
              (loop (%cdrs ls) (cons (apply f cars) acc))
              (reverse acc))))))

(define (for-each f first . rest)
  (%check-procedure 'for-each f)
  (%check-lists 'for-each first rest)
  (if (null? rest)
      (let loop ((l first))
        (if (pair? l)
            (begin (f (car l)) (loop (cdr l)))))
      (let loop ((ls (cons first rest)))
        (let ((cars (%cars ls)))
          (if cars
              (begin (apply f cars) (loop (%cdrs ls)))))))
  (if #f #f))

;; The lists of `map` and `for-each`: each a proper list, or, when there
;; are several, a circular one (they stop at the shortest, R7RS 6.10), as
;; Guile checks them.
(define (%check-lists who first rest)
  (if (null? rest)
      (%check-list who first)
      (for-each (lambda (l)
                  (if (not (or (list? l) (%circular? l)))
                      (%expected who "a proper or circular list" l)))
                (cons first rest))))

(define (%circular? l)
  (let loop ((slow l) (fast l))
    (and (pair? fast) (pair? (cdr fast))
         (let ((slow (cdr slow)) (fast (cddr fast)))
           (or (eq? slow fast) (loop slow fast))))))

(define (%check-all who check what xs)
  (for-each (lambda (x) (if (not (check x)) (%expected who what x))) xs))

(define (vector-map f v . rest)
  (%check-procedure 'vector-map f)
  (%check-all 'vector-map vector? "a vector" (cons v rest))
  (list->vector (apply map f (vector->list v) (map vector->list rest))))

(define (vector-for-each f v . rest)
  (%check-procedure 'vector-for-each f)
  (%check-all 'vector-for-each vector? "a vector" (cons v rest))
  (apply for-each f (vector->list v) (map vector->list rest)))

(define (string-map f s . rest)
  (%check-procedure 'string-map f)
  (%check-all 'string-map string? "a string" (cons s rest))
  (list->string (apply map f (string->list s) (map string->list rest))))

(define (string-for-each f s . rest)
  (%check-procedure 'string-for-each f)
  (%check-all 'string-for-each string? "a string" (cons s rest))
  (apply for-each f (string->list s) (map string->list rest)))

(define (filter keep? lst)
  (let loop ((l lst) (acc '()))
    (cond ((null? l) (reverse acc))
          ((keep? (car l)) (loop (cdr l) (cons (car l) acc)))
          (else (loop (cdr l) acc)))))

(define (reduce f initial lst)
  (if (null? lst) initial
      (let loop ((acc (car lst)) (l (cdr lst)))
        (if (null? l) acc (loop (f (car l) acc) (cdr l))))))

(define (fold-left f acc lst)
  (if (null? lst) acc (fold-left f (f acc (car lst)) (cdr lst))))

(define (fold-right f acc lst)
  (let loop ((l (reverse lst)) (acc acc))
    (if (null? l) acc (loop (cdr l) (f (car l) acc)))))

(define (iota n . args)
  (let ((start (if (pair? args) (car args) 0))
        (step (if (and (pair? args) (pair? (cdr args))) (cadr args) 1)))
    (let loop ((i (- n 1)) (acc '()))
      (if (< i 0) acc (loop (- i 1) (cons (+ start (* i step)) acc))))))

(define (exact-nonnegative-integer? x) (and (exact-integer? x) (>= x 0)))

;; R7RS 6.2.6: the simplest rational within y of x (Stern-Brocot descent by
;; continued fractions). Inexact if either argument is.
(define (rationalize x y)
  (define (simplest lo hi)              ; 0 < lo <= hi
    (let ((fl (floor lo)))
      (cond ((= fl lo) fl)
            ((< fl (floor hi)) (+ fl 1))
            (else (+ fl (/ 1 (simplest (/ 1 (- hi fl)) (/ 1 (- lo fl)))))))))
  (let ((lo (- x (abs y))) (hi (+ x (abs y))))
    (cond ((or (nan? x) (nan? y)) (+ x y))
          ((infinite? y) (if (infinite? x) +nan.0 0.0))
          ((infinite? x) x)
          ((positive? lo) (simplest lo hi))
          ((negative? hi) (- (simplest (- hi) (- lo))))
          (else (if (and (exact? x) (exact? y)) 0 0.0)))))

(define (call-with-output-string proc)
  (let ((port (open-output-string)))
    (proc port)
    (get-output-string port)))

(define (call-with-port port proc)
  (if (not (port? port)) (%expected 'call-with-port "a port" port))
  (%check-procedure 'call-with-port proc)
  (call-with-values (lambda () (proc port))
    (lambda results (close-port port) (apply values results))))

(define (list-index pred lst)
  (let loop ((l lst) (i 0))
    (cond ((null? l) #f) ((pred (car l)) i) (else (loop (cdr l) (+ i 1))))))

;; ---- the standard ports, files, the process (builtins/io.rs, files.rs,
;; process.rs; what reaches the world goes through the host) --------------

(define current-output-port (make-parameter (%standard-port 'output)))
(define current-error-port (make-parameter (%standard-port 'error)))
(define current-input-port (make-parameter (%standard-port 'input)))

(define (call-with-input-file file proc)
  (call-with-port (open-input-file file) proc))

(define (call-with-output-file file proc)
  (call-with-port (open-output-file file) proc))

(define (with-input-from-file file thunk)
  (let ((port (open-input-file file)))
    (call-with-values
        (lambda () (parameterize ((current-input-port port)) (thunk)))
      (lambda results (close-port port) (apply values results)))))

(define (with-output-to-file file thunk)
  (let ((port (open-output-file file)))
    (call-with-values
        (lambda () (parameterize ((current-output-port port)) (thunk)))
      (lambda results (close-port port) (apply values results)))))

;; R7RS 6.12: the environment of the import sets, for `eval`. A bundled
;; library they draw on that has not run yet runs first (its body's
;; forms, as an import at top level runs them).
(define (environment . sets)
  (let loop ()
    (let ((r (%environment sets)))
      (if (%environment? r)
          r
          (begin (for-each (lambda (t) (t)) r) (loop))))))

;; Reads and evaluates each form of the file in turn, as the REPL would.
(define (load file . env)
  (let ((port (open-input-file file))
        (env (if (pair? env) (car env) (interaction-environment))))
    (let loop ()
      (let ((form (read port)))
        (if (eof-object? form)
            (close-port port)
            (begin (eval form env) (loop)))))))

;; Runs the after thunks of every dynamic-wind being left, then ends the
;; evaluation with the status.
(define (exit . status)
  (%wind-to '())
  (%exit (if (pair? status) (car status) #t)))

(define (emergency-exit . status)
  (%exit (if (pair? status) (car status) #t)))

;; ---- the knowledge base (the primitives are in core/src/arb) ---------------

(define (arb:error? x) (%arb:error-alist? x))

;; Runs the thunks that load stored nodes (see arb/loader.rs); a load left
;; by an error is forgotten, so the next use tries again.
(define (%arb:run-thunks thunks ids)
  (let ((done #f))
    (dynamic-wind
     (lambda () #f)
     (lambda ()
       (let loop ((ts thunks))
         (if (pair? ts) (begin ((car ts)) (loop (cdr ts)))))
       (set! done #t))
     (lambda () (apply %arb:load-ended done ids)))))

;; A raised condition as an error alist.
(define (%arb:failure e)
  (cond ((arb:error? e) e)
        ((read-error? e)
         (list (cons "error" "syntax-error") (cons "message" (%condition-text e))))
        ((error-object? e)
         (list (cons "error" "runtime-error") (cons "message" (%condition-text e))))
        (else
         (list (cons "error" "raise")
               (cons "message" (call-with-output-string
                                (lambda (p) (display "raised " p) (write e p))))))))

;; Each body form runs in turn; the first that raises or returns an error
;; alist ends the transaction, which then changes nothing. Leaving it by a
;; continuation abandons it too.
(define (%arb:transaction thunks)
  (let ((token (%arb:tx-begin)))
    (if (arb:error? token)
        token
        (let ((open #t))
          (dynamic-wind
           (lambda () #f)
           (lambda ()
             (let loop ((ts thunks) (i 0) (last (if #f #f)))
               (if (null? ts)
                   (begin (set! open #f) (%arb:tx-commit token last))
                   (let* ((failed #f)
                          (r (guard (e (#t (set! failed #t) (%arb:failure e)))
                               ((car ts)))))
                     (if (or failed (arb:error? r))
                         (begin (set! open #f) (%arb:tx-abort token i r))
                         (loop (cdr ts) (+ i 1) r))))))
           (lambda ()
             (if open
                 (begin (set! open #f) (%arb:tx-abort token #f #f)))))))))

(define-syntax arb:transaction
  (syntax-rules ()
    ((_ body ...) (%arb:transaction (list (lambda () body) ...)))))

(define (arb:eval expr)
  (let ((allowed (%arb:check-tier 1 "arb:eval")))
    (if (arb:error? allowed)
        allowed
        (let ((before (arb:current-version)))
          (guard (e (#t (%arb:failure e)))
            (let ((r (%arb:eval-at-tier 1 expr)))
              (list (cons "result" r)
                    (cons "new-version-id"
                          (let ((now (arb:current-version)))
                            (if (eqv? now before) #f now))))))))))

(define (arb:eval-readonly expr)
  (guard (e (#t (%arb:failure e)))
    (%arb:eval-at-tier 2 expr)))

;; ---- host tools and par ------------------------------------------------------
;;
;; A host tool is a procedure that calls `%tool-call` (Engine::define_tool
;; defines one per tool). A call waits on the host: outside `par` the
;; evaluation suspends (`%suspend`) and the host resumes it with the answers;
;; inside a `par` branch the branch is parked and the scheduler runs the
;; next one, so that one suspension hands the host every branch's calls.
;; An answer is (#t . value) or (#f . condition); a condition is raised at
;; the call.

;; The escape of the `par` branch running now, or #f outside `par`. Reset
;; to #f when an evaluation starts or resumes (the VM's `par_escape` hook).
(define %par-escape #f)

;; Waits on a list of calls; their answers, in order.
(define (%wait-on calls)
  (if %par-escape
      (call/cc (lambda (k) (%par-escape (list 'wait calls k))))
      (%suspend calls)))

(define (%tool-answer a)
  (if (car a) (cdr a) (raise (cdr a))))

(define (%tool-call name . args)
  (%tool-answer (car (%wait-on (list (cons name args))))))

;; Runs each thunk as a branch until it returns or waits on tools; then
;; waits on all the waiting branches' calls at once (in branch order) and
;; resumes each with its answers, until every branch has returned. The
;; value is the list of the branches' values, in order. A branch that
;; raises ends the `par` with its condition (the first such branch in
;; order), raised where the `par` is.
(define (%list-head l n)
  (if (= n 0) '() (cons (car l) (%list-head (cdr l) (- n 1)))))

(define (%par thunks)
  (let ((outer %par-escape))
    ;; Runs (go) as a branch: ('done . value), ('raised . condition) or
    ;; ('wait calls k).
    (define (step go)
      (call/cc (lambda (escape) (set! %par-escape escape) (go))))
    (define (branch thunk)
      (lambda ()
        (let ((r (guard (e (#t (cons 'raised e))) (cons 'done (thunk)))))
          ;; Read the escape after the branch ran: it may have waited and
          ;; been resumed by a later round.
          (%par-escape r))))
    (define (step-all states)
      (if (null? states)
          '()
          (let ((s (car states)))
            (cons (if (eq? (car s) 'wait) s (step (cdr s)))
                  (step-all (cdr states))))))
    (define (first-raised states)
      (cond ((null? states) #f)
            ((eq? (car (car states)) 'raised) (car states))
            (else (first-raised (cdr states)))))
    (define (all-done? states)
      (or (null? states)
          (and (eq? (car (car states)) 'done) (all-done? (cdr states)))))
    (define (calls-of states)
      (if (null? states)
          '()
          (let ((s (car states)))
            (if (eq? (car s) 'wait)
                (append (cadr s) (calls-of (cdr states)))
                (calls-of (cdr states))))))
    ;; Each waiting branch resumed with its share of ANSWERS.
    (define (resume-all states answers)
      (if (null? states)
          '()
          (let ((s (car states)))
            (if (eq? (car s) 'wait)
                (let* ((n (length (cadr s)))
                       (mine (%list-head answers n))
                       (k (caddr s)))
                  (let ((r (step (lambda () (k mine)))))
                    (cons r (resume-all (cdr states) (list-tail answers n)))))
                (cons s (resume-all (cdr states) answers))))))
    (let loop ((states (step-all (map (lambda (t) (cons 'new (branch t))) thunks))))
      (set! %par-escape outer)
      (cond ((first-raised states) => (lambda (s) (raise (cdr s))))
            ((all-done? states) (map cdr states))
            (else
             (let ((answers (%wait-on (calls-of states))))
               ;; Resumed: the escape of whatever runs this `par` now.
               (set! outer %par-escape)
               (loop (resume-all states answers))))))))

(define-syntax par
  (syntax-rules ()
    ((_ e ...) (%par (list (lambda () e) ...)))))

;; `par` over a list: (f x) for each x as a branch; the list of values.
(define (par-map f lst)
  (%par (map (lambda (x) (lambda () (f x))) lst)))

;; ---- plans: the (arbores plan) library --------------------------------------
;;
;; A plan is data a model writes: (plan STEP), a STEP being
;;   (seq STEP ...)                 each in order; the last one's value
;;   (par STEP ...)                 the branches together (their tool calls
;;                                  suspend at once); the list of values
;;   (if STEP STEP STEP)            the condition, then one branch
;;   (let ((VAR STEP) ...) STEP)    each VAR bound to its step's value
;;   (TOOL STEP ...)                a call of a host tool or of `calc`
;;   a string, number or boolean, 'DATUM, or a VAR of an enclosing let.
;; `plan-check` refuses anything else before a step runs, naming the form
;; and where it is; `plan-run` checks, runs, and returns an alist: value
;; (or error) and trace, one entry per tool call.

;; The host's tools: name -> number of parameters (Engine::define_tool).
(define %host-tools '())
(define (%host-tool! name arity)
  (set! %host-tools
        (cons (cons name arity)
              (let drop ((l %host-tools))
                (cond ((null? l) '())
                      ((eq? (car (car l)) name) (cdr l))
                      (else (cons (car l) (drop (cdr l)))))))))

(define (%plan-arity tool)
  (let ((t (assq tool %host-tools)))
    (cond (t (cdr t)) ((eq? tool 'calc) 1) (else #f))))

;; Where a form is, for errors: the path from the top, innermost first;
;; (2 seq plan) reads "plan > seq > 2", () "the top".
(define (%plan-where path)
  (let loop ((p (reverse path)) (out ""))
    (if (null? p)
        (if (string=? out "") "the top" out)
        (loop (cdr p)
              (string-append out (if (string=? out "") "" " > ")
                             (let ((x (car p)))
                               (if (number? x) (number->string x)
                                   (symbol->string x))))))))

(define (%plan-error what form path)
  (error (string-append "plan: " what " at " (%plan-where path)) form))

(define (plan-check plan)
  (define (list-of-length? x) (and (list? x) (length x)))
  (define (step x vars path)
    (cond ((or (string? x) (number? x) (boolean? x)) #t)
          ((symbol? x)
           (or (memq x vars) (%plan-error "unbound variable" x path)))
          ((not (and (pair? x) (list? x)))
           (%plan-error "not a step" x path))
          ((eq? (car x) 'quote)
           (or (= (length x) 2) (%plan-error "malformed quote" x path)))
          ((memq (car x) '(seq par))
           (if (null? (cdr x))
               (%plan-error (string-append (symbol->string (car x)) " with no steps") x path))
           (let loop ((s (cdr x)) (i 1))
             (if (pair? s)
                 (begin (step (car s) vars (cons i (cons (car x) path)))
                        (loop (cdr s) (+ i 1)))))
           #t)
          ((eq? (car x) 'if)
           (if (not (= (length x) 4))
               (%plan-error "if takes a condition, a then and an else step" x path))
           (step (cadr x) vars (cons 'condition (cons 'if path)))
           (step (caddr x) vars (cons 'then (cons 'if path)))
           (step (cadddr x) vars (cons 'else (cons 'if path))))
          ((eq? (car x) 'let)
           (if (not (and (= (length x) 3) (list? (cadr x))))
               (%plan-error "let takes bindings and one body step" x path))
           (let loop ((bs (cadr x)) (i 1))
             (if (pair? bs)
                 (let ((b (car bs)))
                   (if (not (and (list? b) (= (length b) 2) (symbol? (car b))))
                       (%plan-error "a let binding is not (VAR STEP)" b
                                    (cons i (cons 'bindings (cons 'let path)))))
                   (step (cadr b) vars (cons (car b) (cons 'let path)))
                   (loop (cdr bs) (+ i 1)))))
           (step (caddr x) (append (map car (cadr x)) vars) (cons 'body (cons 'let path))))
          ((not (symbol? (car x))) (%plan-error "not a step" x path))
          (else
           (let ((arity (%plan-arity (car x))))
             (cond ((not arity)
                    (%plan-error (string-append "unknown tool " (symbol->string (car x))) x path))
                   ((not (= arity (length (cdr x))))
                    (%plan-error (string-append (symbol->string (car x)) " takes "
                                                (number->string arity) " argument(s)")
                                 x path)))
             (let loop ((a (cdr x)) (i 1))
               (if (pair? a)
                   (begin (step (car a) vars (cons i (cons (car x) path)))
                          (loop (cdr a) (+ i 1)))))
             #t))))
  (if (not (and (list? plan) (= (length plan) 2) (eq? (car plan) 'plan)))
      (%plan-error "a plan is (plan STEP)" plan '())
      (step (cadr plan) '() '(plan))))

;; `calc` when the host has no tool of that name: an arithmetic expression (numbers, + - * /, parentheses, unary
;; minus) read and computed here, not by `eval`. An exact result when it is
;; an integer, else inexact.
(define (%calc expression)
  (define cs (string->list expression))
  (define (fail why) (error (string-append "calc: " why) expression))
  (define (skip) (if (and (pair? cs) (char-whitespace? (car cs))) (begin (set! cs (cdr cs)) (skip))))
  (define (peek) (skip) (and (pair? cs) (car cs)))
  (define (next!) (let ((c (peek))) (set! cs (cdr cs)) c))
  (define (number)
    (let loop ((digits '()))
      (let ((c (and (pair? cs) (car cs))))
        (if (and c (or (char-numeric? c) (char=? c #\.)))
            (begin (set! cs (cdr cs)) (loop (cons c digits)))
            (let ((n (string->number (list->string (reverse digits)))))
              (or n (fail "a malformed number")))))))
  (define (atom)
    (let ((c (peek)))
      (cond ((not c) (fail "an expression ends too soon"))
            ((char=? c #\() (next!)
             (let ((v (sum)))
               (if (eqv? (peek) #\)) (begin (next!) v) (fail "a missing )"))))
            ((char=? c #\-) (next!) (- (atom)))
            ((char=? c #\+) (next!) (atom))
            ((or (char-numeric? c) (char=? c #\.)) (number))
            (else (fail (string-append "an unexpected " (string c)))))))
  (define (product)
    (let loop ((v (atom)))
      (case (peek)
        ((#\*) (next!) (loop (* v (atom))))
        ((#\/) (next!) (let ((d (atom)))
                         (if (zero? d) (fail "division by zero") (loop (/ v d)))))
        (else v))))
  (define (sum)
    (let loop ((v (product)))
      (case (peek)
        ((#\+) (next!) (loop (+ v (product))))
        ((#\-) (next!) (loop (- v (product))))
        (else v))))
  (if (not (string? expression)) (fail "the expression is not a string"))
  (let ((v (sum)))
    (if (peek) (fail (string-append "an unexpected " (string (peek)))))
    (if (and (exact? v) (not (integer? v))) (inexact v) v)))

(define (plan-run plan)
  (plan-check plan)
  (let ((clock 0) (trace '()))
    (define (tick!) (set! clock (+ clock 1)) clock)
    (define (record! entry) (set! trace (cons entry trace)))
    (define (call tool args)
      (let ((start (tick!))
            (f (if (assq tool %host-tools) (%plan-tool tool) %calc)))
        (guard (e (#t (record! (list (cons 'tool (symbol->string tool))
                                     (cons 'args (list->vector args))
                                     (cons 'start start) (cons 'end (tick!))
                                     (cons 'error (%plan-message e))))
                      (raise e)))
          (let ((v (apply f args)))
            (record! (list (cons 'tool (symbol->string tool))
                           (cons 'args (list->vector args))
                           (cons 'start start) (cons 'end (tick!))
                           (cons 'result v)))
            v))))
    (define (run x env)
      (cond ((symbol? x) (cdr (assq x env)))
            ((not (pair? x)) x)
            ((eq? (car x) 'quote) (cadr x))
            ((eq? (car x) 'seq)
             (let loop ((s (cdr x)))
               (let ((v (run (car s) env)))
                 (if (null? (cdr s)) v (loop (cdr s))))))
            ((eq? (car x) 'par) (par-map (lambda (s) (run s env)) (cdr x)))
            ((eq? (car x) 'if)
             (if (run (cadr x) env) (run (caddr x) env) (run (cadddr x) env)))
            ((eq? (car x) 'let)
             (run (caddr x)
                  (append (map (lambda (b) (cons (car b) (run (cadr b) env))) (cadr x))
                          env)))
            (else (call (car x) (map (lambda (a) (run a env)) (cdr x))))))
    (let ((outcome (guard (e (#t (cons 'error (%plan-message e))))
                     (cons 'value (run (cadr plan) '())))))
      (list outcome (cons 'trace (list->vector (reverse trace)))))))

(define (%plan-tool name)
  (eval name (interaction-environment)))

(define (%plan-message e)
  (if (error-object? e) (error-object-message e) e))

;; `comparator-if<=>` of (scheme comparator), here rather than in the
;; library so that the syntax is the engine's own: a session that imported
;; the library still dumps (a dump names the prelude's syntax and holds no
;; other). Hidden like the library's names; the library exports it.
(define-syntax |comparator-if<=>@(scheme comparator)|
  (syntax-rules ()
    ((_ a b less equal greater)
     (|comparator-if<=>@(scheme comparator)|
      (|make-default-comparator@(scheme comparator)|) a b less equal greater))
    ((_ c a b less equal greater)
     (let ((cmp c) (x a) (y b))
       (cond (((|comparator-equality-predicate@(scheme comparator)| cmp) x y) equal)
             (((|comparator-ordering-predicate@(scheme comparator)| cmp) x y) less)
             (else greater))))))

;; `let-string-start+end` of (srfi 13), here for the reason
;; `comparator-if<=>` is: (let-string-start+end (start end [rest]) proc s
;; args body ...) binds the optional start and end of args for string s.
(define-syntax |let-string-start+end@(srfi 13)|
  (syntax-rules ()
    ((_ (start end) proc s args body ...)
     (call-with-values
         (lambda () (|string-parse-final-start+end@(srfi 13)| proc s args))
       (lambda (start end) body ...)))
    ((_ (start end rest) proc s args body ...)
     (call-with-values
         (lambda () (|string-parse-start+end@(srfi 13)| proc s args))
       (lambda (start end rest) body ...)))))

;; `iq` of (scheme ilist), here for the reason `comparator-if<=>` is:
;; (iq datum ...) is the ilist of the data, their pairs made ipairs.
(define-syntax |iq@(scheme ilist)|
  (syntax-rules ()
    ((_ datum ...) (|tree->itree@(scheme ilist)| '(datum ...)))))

;; `rquote` of (scheme rlist), also `quote` of (srfi 101): the datum with
;; its pairs made random-access pairs.
(define-syntax |rquote@(scheme rlist)|
  (syntax-rules ()
    ((_ datum) (|%rlist-datum@(scheme rlist)| 'datum))))

;; The syntax of (scheme stream) = (srfi 41). Each suspends its
;; expressions in thunks that the library's `%stream-cons` and
;; `%stream-lazy` call when the stream is forced.
(define-syntax |stream-cons@(scheme stream)|
  (syntax-rules ()
    ((_ obj strm)
     (|%stream-cons@(scheme stream)| (lambda () obj) (lambda () strm)))))

(define-syntax |stream-lambda@(scheme stream)|
  (syntax-rules ()
    ((_ formals body0 body1 ...)
     (lambda formals (|%stream-lazy@(scheme stream)| (lambda () body0 body1 ...))))))

(define-syntax |define-stream@(scheme stream)|
  (syntax-rules ()
    ((_ (name . formals) body0 body1 ...)
     (define name (|stream-lambda@(scheme stream)| formals body0 body1 ...)))))

(define-syntax |stream@(scheme stream)|
  (syntax-rules ()
    ((_) |stream-null@(scheme stream)|)
    ((_ x y ...) (|stream-cons@(scheme stream)| x (|stream@(scheme stream)| y ...)))))

(define-syntax |stream-let@(scheme stream)|
  (syntax-rules ()
    ((_ tag ((name val) ...) body1 body2 ...)
     ((letrec ((tag (|stream-lambda@(scheme stream)| (name ...) body1 body2 ...))) tag)
      val ...))))

;; (stream-match stream (pattern [fender] expr) ...): each clause is
;; tried in turn; the first whose pattern matches and whose fender (if
;; any) is true gives the value.
(define-syntax |stream-match@(scheme stream)|
  (syntax-rules ()
    ((_ strm-expr clause ...)
     (let ((strm strm-expr))
       (if (not (|stream?@(scheme stream)| strm))
           (error "stream-match: expected a stream" strm))
       (cond ((|%stream-match-clause@(scheme stream)| strm clause) => car) ...
             (else (|%stream-match-fail@(scheme stream)| strm)))))))

;; A clause: a one-element list of its value if it matches, else #f.
(define-syntax |%stream-match-clause@(scheme stream)|
  (syntax-rules ()
    ((_ strm (pattern fender expr))
     (|%stream-match-pattern@(scheme stream)| strm pattern (and fender (list expr))))
    ((_ strm (pattern expr))
     (|%stream-match-pattern@(scheme stream)| strm pattern (list expr)))))

(define-syntax |%stream-match-pattern@(scheme stream)|
  (syntax-rules (_)
    ((_ strm () body)
     (and (|stream-null?@(scheme stream)| strm) body))
    ((_ strm (_ . rest) body)
     (and (|stream-pair?@(scheme stream)| strm)
          (let ((tail (|stream-cdr@(scheme stream)| strm)))
            (|%stream-match-pattern@(scheme stream)| tail rest body))))
    ((_ strm (var . rest) body)
     (and (|stream-pair?@(scheme stream)| strm)
          (let ((var (|stream-car@(scheme stream)| strm))
                (tail (|stream-cdr@(scheme stream)| strm)))
            (|%stream-match-pattern@(scheme stream)| tail rest body))))
    ((_ strm _ body) body)
    ((_ strm var body) (let ((var strm)) body))))

;; (stream-of expr clause ...): clauses (var in stream), (var is expr)
;; and filters, nested left to right.
(define-syntax |stream-of@(scheme stream)|
  (syntax-rules ()
    ((_ expr clause ...)
     (|%stream-of@(scheme stream)| expr |stream-null@(scheme stream)| clause ...))))

(define-syntax |%stream-of@(scheme stream)|
  (syntax-rules (in is)
    ((_ expr base)
     (|stream-cons@(scheme stream)| expr base))
    ((_ expr base (var in s) clause ...)
     (|stream-let@(scheme stream)| loop ((strm s))
       (if (|stream-null?@(scheme stream)| strm)
           base
           (let ((var (|stream-car@(scheme stream)| strm)))
             (|%stream-of@(scheme stream)| expr (loop (|stream-cdr@(scheme stream)| strm)) clause ...)))))
    ((_ expr base (var is e) clause ...)
     (let ((var e)) (|%stream-of@(scheme stream)| expr base clause ...)))
    ((_ expr base pred clause ...)
     (if pred (|%stream-of@(scheme stream)| expr base clause ...) base))))
