;; chibi-scheme: bench/programs/strings.scm with the imports a chibi program needs
(import (scheme base) (scheme write) (scheme time))
(define (build n)
  (let loop ((i 0) (acc '()))
    (if (= i n) (apply string-append (reverse acc))
        (loop (+ i 1) (cons (number->string i) acc)))))
(define (repeat k) (let loop ((i 0) (len 0)) (if (= i k) len (loop (+ i 1) (string-length (build 20000))))))
(display (repeat 50)) (newline)
