;; Hygienic syntax-rules.
(define-syntax swap!
  (syntax-rules () ((_ a b) (let ((tmp a)) (set! a b) (set! b tmp)))))
(define tmp 1) (define other 2)
(swap! tmp other)
(write (list tmp other)) (newline)
;; referential transparency: a local `if` does not change the macro's `if`
(define-syntax my-or (syntax-rules () ((_) #f) ((_ e) e) ((_ e r ...) (let ((t e)) (if t t (my-or r ...))))))
(write (let ((if list) (t 5)) (my-or #f t))) (newline)
;; else rebound locally is not the keyword
(write (let ((else #f)) (cond (else 'not-reached) (#t 'reached)))) (newline)
;; nested ellipses
(define-syntax my-let*
  (syntax-rules () ((_ () body ...) (let () body ...))
                   ((_ ((x v) rest ...) body ...) (let ((x v)) (my-let* (rest ...) body ...)))))
(write (my-let* ((a 1) (b (+ a 1)) (c (* b 3))) (list a b c))) (newline)
(define-syntax flatten-pairs (syntax-rules () ((_ (a b ...) ...) '(a ... (b ... ...)))))
(write (flatten-pairs (1 2 3) (4 5) (6))) (newline)
;; tail pattern after an ellipsis
(define-syntax last-of (syntax-rules () ((_ x ... y) 'y)))
(write (last-of 1 2 3 4)) (newline)
;; vector patterns
(define-syntax vec-sum (syntax-rules () ((_ #(x ...)) (+ x ...))))
(write (vec-sum #(1 2 3 4))) (newline)
;; literals and _
(define-syntax kw (syntax-rules (=>) ((_ a => b) (list 'arrow a b)) ((_ _ _ _) 'other)))
(write (list (kw 1 => 2) (kw 1 2 3))) (newline)
;; custom ellipsis
(define-syntax my-list (syntax-rules ::: () ((_ x :::) (list x :::))))
(write (my-list 1 2 3)) (newline)
;; (... ...) escape
(define-syntax def-lister
  (syntax-rules () ((_ name) (define-syntax name (syntax-rules () ((_ x (... ...)) (list 'name x (... ...))))))))
(def-lister lst)
(write (lst 1 2)) (newline)
;; let-syntax and letrec-syntax
(write (let-syntax ((foo (syntax-rules () ((_ x) (* x 10))))) (foo 4))) (newline)
(write (letrec-syntax ((ev? (syntax-rules () ((_ n) (if (= n 0) #t (od? (- n 1))))))
                       (od? (syntax-rules () ((_ n) (if (= n 0) #f #t)))))
         (ev? 2))) (newline)
;; a macro introducing a binding the user's code cannot see
(define-syntax with-hidden (syntax-rules () ((_ e) (let ((hidden 99)) e))))
(define hidden 'outer)
(write (with-hidden hidden)) (newline)
