(define (greet name) (string-append "hello, " name))
(greet (search "user name"))
