;; Scores `arb:semantic-search` on the dev set. The program that runs this
;; first defines `%nodes` and `%queries` (the data of nodes.scm and
;; queries.scm) and runs it in the system tier on an empty knowledge base.
;;
;; Metrics, per query with relevant set R and the top 10 hits:
;;   recall@k = |R within the first k| / min(k, |R|)
;;   MRR@10   = 1 / rank of the first relevant hit (0 if none in the top 10)
;; Queries of each kind are split: every third (the 3rd, 6th, ...) is held
;; out as "test"; the rest are "dev", the part tuned on.

(define %ids
  (arb:transaction
    (map (lambda (n)
           (let* ((key (list-ref n 0)) (type (list-ref n 1)) (names (list-ref n 2))
                  (desc (list-ref n 3)) (code (list-ref n 4))
                  (r (arb:create code '() desc type names)))
             (if (arb:error? r)
                 (error "the node cannot be created" key r)
                 (cons key (cdr (assoc "s-expression-id" r))))))
         %nodes)))
(define %key->id
  (let ((ids (cdr (assoc "result" %ids))))
    (lambda (key)
      (let ((p (assq key ids)))
        (if p (cdr p) (error "no node has this key" key))))))

;; The 1-based rank of each relevant node in the top 10, or #f.
(define (ranks query relevant)
  (let* ((hits (arb:semantic-search query 10))
         (ids (map (lambda (h) (cdr (assoc "id" h))) hits)))
    (when (arb:error? hits) (error "the search failed" query hits))
    (map (lambda (key)
           (let loop ((l ids) (i 1))
             (cond ((null? l) #f)
                   ((= (car l) (%key->id key)) i)
                   (else (loop (cdr l) (+ i 1))))))
         relevant)))

(define (list-head* l k)
  (if (or (= k 0) (null? l)) '() (cons (car l) (list-head* (cdr l) (- k 1)))))

(define (recall-at k rs)
  (/ (length (filter (lambda (r) (and r (<= r k))) rs))
     (min k (length rs))))
(define (reciprocal-rank rs)
  (let ((found (filter (lambda (r) r) rs)))
    (if (null? found) 0 (/ 1 (apply min found)))))

;; One record per query: (kind language split recall@1 recall@5 rr).
(define %results
  (let loop ((qs %queries) (seen '()) (out '()))
    (if (null? qs)
        (reverse out)
        (let* ((q (car qs)) (kind (list-ref q 0)) (lang (list-ref q 1))
               (text (list-ref q 2)) (rel (list-ref q 3))
               (n (let ((p (assq kind seen))) (if p (cdr p) 0)))
               (split (if (= (modulo n 3) 2) 'test 'dev))
               (rs (ranks text rel)))
          (when (%verbose?)
            (display (list kind split text rs)) (newline)
            (for-each (lambda (h)
                        (display "    ") (display (cdr (assoc "score" h))) (display " ")
                        (display (cdr (assoc "description" h))) (newline))
                      (list-head* (arb:semantic-search text 10) 3)))
          (loop (cdr qs)
                (cons (cons kind (+ n 1)) seen)
                (cons (list kind lang split (recall-at 1 rs) (recall-at 5 rs) (reciprocal-rank rs))
                      out))))))

(define (fixed2 x)
  (let* ((s (number->string (/ (round (* (inexact x) 100)) 100))))
    (cond ((string=? s "1.") "1.00") ((string=? s "0.") "0.00") ((string=? s "0") "0.00") ((string=? s "1") "1.00")
          ((= (string-length s) 3) (string-append s "0"))
          (else s))))

(define (row label keep?)
  (let* ((rs (filter keep? %results)) (n (length rs))
         (avg (lambda (i) (if (= n 0) 0 (/ (apply + (map (lambda (r) (list-ref r i)) rs)) n)))))
    (display (string-append "| " label " (" (number->string n) ") | "
                            (fixed2 (avg 3)) " | " (fixed2 (avg 4)) " | " (fixed2 (avg 5)) " |"))
    (newline)))

(define (table split?)
  (let ((in? (lambda (r) (split? (list-ref r 2)))))
    (display "| queries | recall@1 | recall@5 | MRR@10 |") (newline)
    (display "|---|---|---|---|") (newline)
    (row "all" in?)
    (row "all but compound" (lambda (r) (and (in? r) (not (eq? (car r) 'compound)))))
    (for-each
      (lambda (k)
        (row (cadr k) (lambda (r) (and (in? r) (eq? (car r) (car k))))))
      '((keyword "keyword, same language") (paraphrase "paraphrase, no shared words")
        (symbol "symbol-name queries") (zh-en "Chinese query, English descriptions")
        (en-zh "English query, Chinese descriptions")
        (compound "compound: topic and generic word")))
    (row "Chinese queries" (lambda (r) (and (in? r) (eq? (cadr r) 'zh))))
    (row "English queries" (lambda (r) (and (in? r) (eq? (cadr r) 'en))))))

(display "dev:") (newline)
(table (lambda (s) (eq? s 'dev)))
(newline)
(display "test (held out):") (newline)
(table (lambda (s) (eq? s 'test)))
(newline)
(display "all:") (newline)
(table (lambda (s) #t))

;; The seed's own query: all six sorting algorithms should fill the top 6.
(let ((rs (ranks "排序算法" '(merge-sort quick-sort bubble-sort insertion-sort selection-sort heap-sort))))
  (display "排序算法: sorting nodes in the top 6: ")
  (display (length (filter (lambda (r) (and r (<= r 6))) rs)))
  (display " of 6, ranks ")
  (display rs)
  (newline))
