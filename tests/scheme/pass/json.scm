; The one mapping between Scheme values and JSON (docs/API.md, "Values as JSON").
(define (show x) (write x) (newline))
(define (refused thunk)
  (guard (e (#t (display (error-object-message e)) (newline)))
    (thunk)))

; Scheme to JSON
(show (scheme->json #t))
(show (scheme->json 'null))
(show (scheme->json (expt 2 80)))
(show (scheme->json -0.25))
(show (scheme->json 3.0))
(show (scheme->json "tab\there \"quoted\" é"))
(show (scheme->json 'a-symbol))
(show (scheme->json '()))
(show (scheme->json (vector 1 "two" '#(3))))
(show (scheme->json '(1 2 3)))
(show (scheme->json '(("id" . 256) (names "sq" "square") (deps))))
(show (scheme->json '((("id" . 1)) (("id" . 2)))))

; JSON to Scheme
(show (json->scheme "[1, 2.0, 1e3, -0, 123456789012345678901234567890]"))
(show (json->scheme "{\"a\": {\"b\": [true, false, null]}, \"c\": \"\\u00e9\\ud83d\\ude00\"}"))
(show (json->scheme "{}"))
(show (exact? (json->scheme "9007199254740993")))
(show (equal? (json->scheme (scheme->json '(("k" . #(1 "x"))))) '(("k" . #(1 "x")))))

; refused, with what and where
(refused (lambda () (scheme->json (list 1 (vector (/ 0. 0.))))))
(refused (lambda () (scheme->json (/ 1 3))))
(refused (lambda () (scheme->json #\a)))
(refused (lambda () (scheme->json car)))
(refused (lambda () (scheme->json '(1 . 2))))
(refused (lambda () (scheme->json '(("a" . 1) ("a" . 2)))))
(refused (lambda () (json->scheme "[1 2]")))
(refused (lambda () (json->scheme "{\"x\": 1,\n \"x\": 2}")))
(refused (lambda () (json->scheme "\"\\ud800\"")))
(refused (lambda () (json->scheme 42)))
