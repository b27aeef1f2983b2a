;; chibi-scheme: bench/programs/hashtable-strings.scm with (scheme time) imported for the timer.
;; 100,000 inserts and 100,000 lookups of string keys (each lookup with a
;; fresh string, so equal? hashing and comparison do the work) in an
;; equal? hash table, SRFI 69 names.
(import (scheme base) (scheme write) (srfi 69) (scheme time))
(define n 100000)
(define t (make-hash-table equal?))
(let loop ((i 0))
  (when (< i n)
    (hash-table-set! t (number->string i) i)
    (loop (+ i 1))))
(define found
  (let loop ((i 0) (acc 0))
    (if (< i n)
        (loop (+ i 1)
              (if (hash-table-ref/default t (number->string i) #f) (+ acc 1) acc))
        acc)))
(display found) (newline)
(display (hash-table-size t)) (newline)
