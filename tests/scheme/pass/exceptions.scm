;; raise, raise-continuable, with-exception-handler, guard, error objects.
(write (guard (e (#t (list 'caught e))) (raise 'oops))) (newline)
(write (guard (e ((symbol? e) 'sym) ((string? e) 'str)) (raise "x"))) (newline)
(write (with-exception-handler
         (lambda (c) 42)
         (lambda () (+ (raise-continuable 'c) 1)))) (newline)
(write (guard (e ((error-object? e) (list (error-object-message e) (error-object-irritants e))))
         (error "Something bad:" 1 "two" 'three))) (newline)
(write (guard (e ((string? e) 'no) (else (list 'else e))) (raise 5))) (newline)
(write (guard (e (#t (error-object? e))) (car '()))) (newline)
(write (guard (e (#t (error-object-message e))) (vector-ref (vector 1 2) 5))) (newline)
(write (guard (e ((assq 'a e) => cdr) ((assq 'b e))) (raise (list (cons 'a 42))))) (newline)
(write (guard (e ((assq 'a e) => cdr) ((assq 'b e))) (raise (list (cons 'b 23))))) (newline)
;; nested guard re-raises to the outer one
(write (guard (outer (#t (list 'outer outer)))
         (guard (inner ((number? inner) 'num)) (raise 'not-a-number)))) (newline)
(write (call/cc (lambda (k) (with-exception-handler (lambda (e) (k (list 'handled e))) (lambda () (raise 'boom)))))) (newline)
(write (read-error? (guard (e (#t e)) (read (open-input-string "(1 2"))))) (newline)
(write (file-error? (guard (e (#t e)) (error "x")))) (newline)
