(define-library (srfi 1) (export x) (import (scheme base)) (begin (define x 1)))
