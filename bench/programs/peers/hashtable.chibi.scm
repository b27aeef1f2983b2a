;; chibi-scheme: bench/programs/hashtable.scm with (scheme time) imported for the timer.
;; 100,000 inserts and 100,000 lookups of exact integer keys in an
;; equal? hash table (SRFI 69 names, which SRFI 125 keeps), then 50,000
;; deletions. Prints the sum of what the lookups found and the size left.
(import (scheme base) (scheme write) (srfi 69) (scheme time))
(define n 100000)
(define t (make-hash-table equal?))
(let loop ((i 0))
  (when (< i n)
    (hash-table-set! t (* i 7) i)
    (loop (+ i 1))))
(define sum
  (let loop ((i 0) (acc 0))
    (if (< i n)
        (loop (+ i 1) (+ acc (hash-table-ref/default t (* i 7) 0)))
        acc)))
(let loop ((i 0))
  (when (< i n)
    (hash-table-delete! t (* i 7))
    (loop (+ i 2))))
(display sum) (newline)
(display (hash-table-size t)) (newline)
