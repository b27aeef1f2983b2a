;; (scheme text), also (srfi 135): immutable texts. A text is a record
;; holding a string that nothing outside the library ever sees: made
;; from a fresh copy, and copied again when a string is asked for. The
;; engine's strings index in O(1), so `text-ref` and `text-length` are
;; O(1); subtexts and concatenations copy (no shared storage). Every
;; `textual-` procedure takes texts and strings alike; every text result
;; is a new text. Optional START/END are checked and name the procedure.
(define-library (scheme text)
  (export
   text? textual? textual-null? textual-every textual-any
   make-text text text-tabulate text-unfold text-unfold-right
   textual->text textual->string textual->vector textual->list
   string->text vector->text list->text reverse-list->text
   textual->utf8 textual->utf16be textual->utf16 textual->utf16le
   utf8->text utf16be->text utf16->text utf16le->text
   text-length textual-length text-ref textual-ref subtext subtextual
   textual-copy textual-take textual-take-right textual-drop
   textual-drop-right textual-pad textual-pad-right textual-trim
   textual-trim-right textual-trim-both
   textual-replace
   textual=? textual-ci=? textual<? textual-ci<? textual>? textual-ci>?
   textual<=? textual-ci<=? textual>=? textual-ci>=?
   textual-prefix-length textual-suffix-length textual-prefix? textual-suffix?
   textual-index textual-index-right textual-skip textual-skip-right
   textual-contains textual-contains-right
   textual-upcase textual-downcase textual-foldcase textual-titlecase
   textual-append textual-concatenate textual-concatenate-reverse textual-join
   textual-fold textual-fold-right textual-map textual-for-each
   textual-map-index textual-for-each-index textual-count
   textual-filter textual-remove
   textual-replicate textual-split)
  (import (scheme base) (scheme char))
  (begin
    (define fail %expected)

    (define-record-type <text>
      (%text chars)
      text?
      (chars text-chars))

    (define empty (%text ""))

    ;; A text of string s, which the caller has just made (never shared).
    (define (own s) (if (= 0 (string-length s)) empty (%text s)))

    (define (textual? x) (or (text? x) (string? x)))

    ;; The characters of a textual argument, as a string not to mutate.
    (define (chars-of who x)
      (cond ((text? x) (text-chars x))
            ((string? x) x)
            (else (fail who "a text or string" x))))

    (define check-procedure %check-procedure)

    (define (check-char who c)
      (if (not (char? c)) (fail who "a character" c)))

    (define check-count %check-count)

    ;; The optional start and end in opt for a sequence of length len,
    ;; checked; then what follows them in opt.
    (define (bounds who len opt)
      (let* ((start (if (pair? opt) (car opt) 0))
             (rest (if (pair? opt) (cdr opt) '()))
             (end (if (pair? rest) (car rest) len))
             (rest (if (pair? rest) (cdr rest) '())))
        (if (not (and (exact-integer? start) (<= 0 start len)))
            (error (string-append (symbol->string who) ": start "
                                  (if (exact-integer? start) (number->string start) "")
                                  " is out of range for a length of "
                                  (number->string len))
                   start))
        (if (not (and (exact-integer? end) (<= start end len)))
            (error (string-append (symbol->string who) ": end "
                                  (if (exact-integer? end) (number->string end) "")
                                  " is out of range (start " (number->string start)
                                  ", length " (number->string len) ")")
                   end))
        (values start end rest)))

    ;; The characters of textual x in its optional [start, end) range.
    (define (range who x opt)
      (let ((s (chars-of who x)))
        (let-values (((start end rest) (bounds who (string-length s) opt)))
          (values s start end))))

    ;; A character, string or text as a string (for mapped results).
    (define (piece who x)
      (cond ((char? x) (string x))
            ((string? x) x)
            ((text? x) (text-chars x))
            (else (fail who "a character, string or text" x))))

    ;; Predicates

    (define (textual-null? x) (= 0 (string-length (chars-of 'textual-null? x))))

    (define (textual-every pred x . opt)
      (check-procedure 'textual-every pred)
      (let-values (((s start end) (range 'textual-every x opt)))
        (let loop ((i start) (last #t))
          (if (= i end)
              last
              (let ((v (pred (string-ref s i))))
                (and v (loop (+ i 1) v)))))))

    (define (textual-any pred x . opt)
      (check-procedure 'textual-any pred)
      (let-values (((s start end) (range 'textual-any x opt)))
        (let loop ((i start))
          (and (< i end)
               (or (pred (string-ref s i)) (loop (+ i 1)))))))

    ;; Constructors

    (define (make-text len c)
      (check-count 'make-text len)
      (check-char 'make-text c)
      (own (make-string len c)))

    (define (text . cs)
      (for-each (lambda (c) (check-char 'text c)) cs)
      (own (list->string cs)))

    (define (text-tabulate proc len)
      (check-procedure 'text-tabulate proc)
      (check-count 'text-tabulate len)
      (let ((s (make-string len)))
        (do ((i 0 (+ i 1))) ((= i len) (own s))
          (let ((c (proc i)))
            (check-char 'text-tabulate c)
            (string-set! s i c)))))

    (define (unfold who stop? mapper successor seed opt right)
      (check-procedure who stop?)
      (check-procedure who mapper)
      (check-procedure who successor)
      (let ((base (if (pair? opt) (piece who (car opt)) ""))
            (make-final (if (and (pair? opt) (pair? (cdr opt))) (cadr opt) (lambda (x) ""))))
        (check-procedure who make-final)
        (let loop ((seed seed) (acc '()))
          (if (stop? seed)
              (let ((final (piece who (make-final seed))))
                (own (if right
                         (apply string-append final acc)
                         (apply string-append base (reverse (cons final acc))))))
              (loop (successor seed) (cons (piece who (mapper seed)) acc))))))

    (define (text-unfold stop? mapper successor seed . opt)
      (unfold 'text-unfold stop? mapper successor seed opt #f))

    (define (text-unfold-right stop? mapper successor seed . opt)
      (let ((t (unfold 'text-unfold-right stop? mapper successor seed
                       (if (pair? opt) (cons "" (cdr opt)) opt) #t)))
        (if (pair? opt)
            (own (string-append (text-chars t) (piece 'text-unfold-right (car opt))))
            t)))

    ;; Conversion

    (define (textual->text x)
      (if (text? x) x (own (string-copy (chars-of 'textual->text x)))))

    (define (textual->string x . opt)
      (let-values (((s start end) (range 'textual->string x opt)))
        (string-copy s start end)))

    (define (textual->vector x . opt)
      (let-values (((s start end) (range 'textual->vector x opt)))
        (string->vector s start end)))

    (define (textual->list x . opt)
      (let-values (((s start end) (range 'textual->list x opt)))
        (string->list s start end)))

    (define (string->text s . opt)
      (if (not (string? s)) (fail 'string->text "a string" s))
      (let-values (((start end rest) (bounds 'string->text (string-length s) opt)))
        (own (string-copy s start end))))

    (define (vector->text v . opt)
      (if (not (vector? v)) (fail 'vector->text "a vector" v))
      (let-values (((start end rest) (bounds 'vector->text (vector-length v) opt)))
        (do ((i start (+ i 1))) ((= i end))
          (check-char 'vector->text (vector-ref v i)))
        (own (vector->string v start end))))

    (define (list->text l . opt)
      (if (not (list? l)) (fail 'list->text "a proper list" l))
      (let-values (((start end rest) (bounds 'list->text (length l) opt)))
        (let ((cs (let take ((l (list-tail l start)) (n (- end start)))
                    (if (= n 0) '() (cons (car l) (take (cdr l) (- n 1)))))))
          (for-each (lambda (c) (check-char 'list->text c)) cs)
          (own (list->string cs)))))

    (define (reverse-list->text l)
      (if (not (list? l)) (fail 'reverse-list->text "a proper list" l))
      (for-each (lambda (c) (check-char 'reverse-list->text c)) l)
      (own (list->string (reverse l))))

    (define (textual->utf8 x . opt)
      (let-values (((s start end) (range 'textual->utf8 x opt)))
        (string->utf8 s start end)))

    ;; UTF-16 code units of string s[start, end), big- or little-endian.
    (define (utf16 s start end big bom)
      (let ((out (open-output-bytevector)))
        (define (unit u)
          (if big
              (begin (write-u8 (quotient u 256) out) (write-u8 (remainder u 256) out))
              (begin (write-u8 (remainder u 256) out) (write-u8 (quotient u 256) out))))
        (if bom (unit #xFEFF))
        (do ((i start (+ i 1))) ((= i end))
          (let ((n (char->integer (string-ref s i))))
            (if (< n #x10000)
                (unit n)
                (let ((m (- n #x10000)))
                  (unit (+ #xD800 (quotient m 1024)))
                  (unit (+ #xDC00 (remainder m 1024)))))))
        (get-output-bytevector out)))

    (define (textual->utf16be x . opt)
      (let-values (((s start end) (range 'textual->utf16be x opt)))
        (utf16 s start end #t #f)))

    (define (textual->utf16le x . opt)
      (let-values (((s start end) (range 'textual->utf16le x opt)))
        (utf16 s start end #f #f)))

    ;; With a byte order mark, big-endian.
    (define (textual->utf16 x . opt)
      (let-values (((s start end) (range 'textual->utf16 x opt)))
        (utf16 s start end #t #t)))

    (define (utf8->text bv . opt)
      (if (not (bytevector? bv)) (fail 'utf8->text "a bytevector" bv))
      (let-values (((start end rest) (bounds 'utf8->text (bytevector-length bv) opt)))
        (own (utf8->string bv start end))))

    (define (decode-utf16 who bv start end big)
      (if (odd? (- end start)) (error (string-append (symbol->string who) ": odd number of bytes") (- end start)))
      (let ((out (open-output-string)))
        (define (unit i)
          (if big
              (+ (* 256 (bytevector-u8-ref bv i)) (bytevector-u8-ref bv (+ i 1)))
              (+ (* 256 (bytevector-u8-ref bv (+ i 1))) (bytevector-u8-ref bv i))))
        (let loop ((i start))
          (if (< i end)
              (let ((u (unit i)))
                (cond ((and (<= #xD800 u #xDBFF) (< (+ i 2) end)
                            (<= #xDC00 (unit (+ i 2)) #xDFFF))
                       (write-char (integer->char (+ #x10000 (* 1024 (- u #xD800)) (- (unit (+ i 2)) #xDC00)))
                                   out)
                       (loop (+ i 4)))
                      ((<= #xD800 u #xDFFF)
                       (error (string-append (symbol->string who) ": invalid UTF-16 at byte")
                              i))
                      (else (write-char (integer->char u) out) (loop (+ i 2)))))))
        (own (get-output-string out))))

    (define (utf16be->text bv . opt)
      (if (not (bytevector? bv)) (fail 'utf16be->text "a bytevector" bv))
      (let-values (((start end rest) (bounds 'utf16be->text (bytevector-length bv) opt)))
        (decode-utf16 'utf16be->text bv start end #t)))

    (define (utf16le->text bv . opt)
      (if (not (bytevector? bv)) (fail 'utf16le->text "a bytevector" bv))
      (let-values (((start end rest) (bounds 'utf16le->text (bytevector-length bv) opt)))
        (decode-utf16 'utf16le->text bv start end #f)))

    ;; A leading byte order mark chooses the order (and is dropped);
    ;; without one, big-endian, as `textual->utf16` writes.
    (define (utf16->text bv . opt)
      (if (not (bytevector? bv)) (fail 'utf16->text "a bytevector" bv))
      (let-values (((start end rest) (bounds 'utf16->text (bytevector-length bv) opt)))
        (cond ((and (<= (+ start 2) end) (= (bytevector-u8-ref bv start) #xFE)
                    (= (bytevector-u8-ref bv (+ start 1)) #xFF))
               (decode-utf16 'utf16->text bv (+ start 2) end #t))
              ((and (<= (+ start 2) end) (= (bytevector-u8-ref bv start) #xFF)
                    (= (bytevector-u8-ref bv (+ start 1)) #xFE))
               (decode-utf16 'utf16->text bv (+ start 2) end #f))
              (else (decode-utf16 'utf16->text bv start end #t)))))

    ;; Selection

    (define (text-length t)
      (if (not (text? t)) (fail 'text-length "a text" t))
      (string-length (text-chars t)))

    (define (textual-length x) (string-length (chars-of 'textual-length x)))

    (define (ref who s k)
      (if (not (and (exact-integer? k) (<= 0 k) (< k (string-length s))))
          (error (string-append (symbol->string who) ": index out of range") k (string-length s)))
      (string-ref s k))

    (define (text-ref t k)
      (if (not (text? t)) (fail 'text-ref "a text" t))
      (ref 'text-ref (text-chars t) k))

    (define (textual-ref x k) (ref 'textual-ref (chars-of 'textual-ref x) k))

    (define (sub who x start end)
      (let ((s (chars-of who x)))
        (bounds who (string-length s) (list start end))
        (if (and (text? x) (= start 0) (= end (string-length s)))
            x
            (own (string-copy s start end)))))

    (define (subtext t start end)
      (if (not (text? t)) (fail 'subtext "a text" t))
      (sub 'subtext t start end))

    (define (subtextual x start end) (sub 'subtextual x start end))

    (define (textual-copy x . opt)
      (let-values (((s start end) (range 'textual-copy x opt)))
        (own (string-copy s start end))))

    (define (take who x n from-right keep)
      (let ((s (chars-of who x)))
        (check-count who n)
        (if (> n (string-length s))
            (error (string-append (symbol->string who) ": count is larger than the length")
                   n (string-length s)))
        (let* ((len (string-length s))
               (cut (if from-right (- len n) n)))
          (own (if (eq? keep 'left) (string-copy s 0 cut) (string-copy s cut len))))))

    (define (textual-take x n) (take 'textual-take x n #f 'left))
    (define (textual-drop x n) (take 'textual-drop x n #f 'right))
    (define (textual-take-right x n) (take 'textual-take-right x n #t 'right))
    (define (textual-drop-right x n) (take 'textual-drop-right x n #t 'left))

    (define (pad who x len opt left)
      (check-count who len)
      (let ((c (if (pair? opt) (car opt) #\space)))
        (check-char who c)
        (let-values (((s start end) (range who x (if (pair? opt) (cdr opt) '()))))
          (let ((n (- end start)))
            (own
             (cond ((>= n len)
                    (if left (string-copy s (- end len) end) (string-copy s start (+ start len))))
                   (left (string-append (make-string (- len n) c) (string-copy s start end)))
                   (else (string-append (string-copy s start end) (make-string (- len n) c)))))))))

    (define (textual-pad x len . opt) (pad 'textual-pad x len opt #t))
    (define (textual-pad-right x len . opt) (pad 'textual-pad-right x len opt #f))

    (define (trim who x opt left right)
      (let ((pred (if (pair? opt) (car opt) char-whitespace?)))
        (check-procedure who pred)
        (let-values (((s start end) (range who x (if (pair? opt) (cdr opt) '()))))
          (let* ((from (if left
                           (let loop ((i start)) (if (and (< i end) (pred (string-ref s i))) (loop (+ i 1)) i))
                           start))
                 (to (if right
                         (let loop ((i end)) (if (and (> i from) (pred (string-ref s (- i 1)))) (loop (- i 1)) i))
                         end)))
            (own (string-copy s from to))))))

    (define (textual-trim x . opt) (trim 'textual-trim x opt #t #f))
    (define (textual-trim-right x . opt) (trim 'textual-trim-right x opt #f #t))
    (define (textual-trim-both x . opt) (trim 'textual-trim-both x opt #t #t))

    ;; Replacement

    (define (textual-replace x1 x2 start1 end1 . opt)
      (let ((s1 (chars-of 'textual-replace x1)))
        (bounds 'textual-replace (string-length s1) (list start1 end1))
        (let-values (((s2 start2 end2) (range 'textual-replace x2 opt)))
          (own (string-append (string-copy s1 0 start1)
                              (string-copy s2 start2 end2)
                              (string-copy s1 end1 (string-length s1)))))))

    ;; Comparison

    (define (compare who same? xs)
      (if (or (null? xs) (null? (cdr xs)))
          (error (string-append (symbol->string who) ": expected at least two texts") xs))
      (apply same? (map (lambda (x) (chars-of who x)) xs)))

    (define (textual=? . xs) (compare 'textual=? string=? xs))
    (define (textual<? . xs) (compare 'textual<? string<? xs))
    (define (textual>? . xs) (compare 'textual>? string>? xs))
    (define (textual<=? . xs) (compare 'textual<=? string<=? xs))
    (define (textual>=? . xs) (compare 'textual>=? string>=? xs))
    (define (textual-ci=? . xs) (compare 'textual-ci=? string-ci=? xs))
    (define (textual-ci<? . xs) (compare 'textual-ci<? string-ci<? xs))
    (define (textual-ci>? . xs) (compare 'textual-ci>? string-ci>? xs))
    (define (textual-ci<=? . xs) (compare 'textual-ci<=? string-ci<=? xs))
    (define (textual-ci>=? . xs) (compare 'textual-ci>=? string-ci>=? xs))

    ;; Prefixes and suffixes

    ;; Both textual arguments with their optional ranges.
    (define (range2 who x1 x2 opt)
      (let ((s1 (chars-of who x1)) (s2 (chars-of who x2)))
        (let*-values (((start1 end1 rest) (bounds who (string-length s1) opt))
                      ((start2 end2 rest) (bounds who (string-length s2) rest)))
          (values s1 start1 end1 s2 start2 end2))))

    (define (prefix-length who x1 x2 opt)
      (let-values (((s1 start1 end1 s2 start2 end2) (range2 who x1 x2 opt)))
        (let loop ((i start1) (j start2) (n 0))
          (if (and (< i end1) (< j end2) (char=? (string-ref s1 i) (string-ref s2 j)))
              (loop (+ i 1) (+ j 1) (+ n 1))
              n))))

    (define (suffix-length who x1 x2 opt)
      (let-values (((s1 start1 end1 s2 start2 end2) (range2 who x1 x2 opt)))
        (let loop ((i end1) (j end2) (n 0))
          (if (and (> i start1) (> j start2) (char=? (string-ref s1 (- i 1)) (string-ref s2 (- j 1))))
              (loop (- i 1) (- j 1) (+ n 1))
              n))))

    (define (textual-prefix-length x1 x2 . opt) (prefix-length 'textual-prefix-length x1 x2 opt))
    (define (textual-suffix-length x1 x2 . opt) (suffix-length 'textual-suffix-length x1 x2 opt))

    (define (textual-prefix? x1 x2 . opt)
      (let-values (((s1 start1 end1 s2 start2 end2) (range2 'textual-prefix? x1 x2 opt)))
        (= (- end1 start1) (prefix-length 'textual-prefix? x1 x2 opt))))

    (define (textual-suffix? x1 x2 . opt)
      (let-values (((s1 start1 end1 s2 start2 end2) (range2 'textual-suffix? x1 x2 opt)))
        (= (- end1 start1) (suffix-length 'textual-suffix? x1 x2 opt))))

    ;; Searching

    (define (search who x pred opt want from-right)
      (check-procedure who pred)
      (let-values (((s start end) (range who x opt)))
        (if from-right
            (let loop ((i (- end 1)))
              (cond ((< i start) #f)
                    ((eq? want (not (pred (string-ref s i)))) (loop (- i 1)))
                    (else i)))
            (let loop ((i start))
              (cond ((>= i end) #f)
                    ((eq? want (not (pred (string-ref s i)))) (loop (+ i 1)))
                    (else i))))))

    (define (textual-index x pred . opt) (search 'textual-index x pred opt #t #f))
    (define (textual-index-right x pred . opt) (search 'textual-index-right x pred opt #t #t))
    (define (textual-skip x pred . opt) (search 'textual-skip x pred opt #f #f))
    (define (textual-skip-right x pred . opt) (search 'textual-skip-right x pred opt #f #t))

    (define (textual-contains x1 x2 . opt)
      (let-values (((s1 start1 end1 s2 start2 end2) (range2 'textual-contains x1 x2 opt)))
        (%string-contains s1 s2 start1 end1 start2 end2)))

    (define (textual-contains-right x1 x2 . opt)
      (let-values (((s1 start1 end1 s2 start2 end2) (range2 'textual-contains-right x1 x2 opt)))
        (let ((m (- end2 start2)))
          (let loop ((i (- end1 m)))
            (cond ((< i start1) #f)
                  ((let match ((k 0))
                     (or (= k m)
                         (and (char=? (string-ref s1 (+ i k)) (string-ref s2 (+ start2 k)))
                              (match (+ k 1)))))
                   i)
                  (else (loop (- i 1))))))))

    ;; Case conversion

    (define (textual-upcase x) (own (string-upcase (chars-of 'textual-upcase x))))
    (define (textual-downcase x) (own (string-downcase (chars-of 'textual-downcase x))))
    (define (textual-foldcase x) (own (string-foldcase (chars-of 'textual-foldcase x))))

    ;; The first letter of each word upcased, the rest downcased. A word
    ;; is a run of letters, an apostrophe between two letters included
    ;; ("it's", as Unicode's word boundaries have it).
    (define (textual-titlecase x)
      (let* ((s (chars-of 'textual-titlecase x)) (n (string-length s)) (out (open-output-string)))
        (define (apostrophe-in-word? i)
          (and (memv (string-ref s i) '(#\' #\x2019))
               (< (+ i 1) n) (char-alphabetic? (string-ref s (+ i 1)))))
        (let loop ((i 0) (in-word #f))
          (if (< i n)
              (let ((c (string-ref s i)))
                (cond ((and in-word (apostrophe-in-word? i)) (write-char c out) (loop (+ i 1) #t))
                      ((not (char-alphabetic? c)) (write-char c out) (loop (+ i 1) #f))
                      (in-word (write-string (string-downcase (string c)) out) (loop (+ i 1) #t))
                      (else (write-string (string-upcase (string c)) out) (loop (+ i 1) #t))))
              (own (get-output-string out))))))

    ;; Concatenation

    (define (textual-append . xs)
      (own (apply string-append (map (lambda (x) (chars-of 'textual-append x)) xs))))

    (define (textual-concatenate xs)
      (if (not (list? xs)) (fail 'textual-concatenate "a list of texts" xs))
      (own (apply string-append (map (lambda (x) (chars-of 'textual-concatenate x)) xs))))

    (define (textual-concatenate-reverse xs . opt)
      (if (not (list? xs)) (fail 'textual-concatenate-reverse "a list of texts" xs))
      (let ((final (if (pair? opt)
                       (let ((s (chars-of 'textual-concatenate-reverse (car opt))))
                         (if (pair? (cdr opt))
                             (let-values (((start end rest)
                                           (bounds 'textual-concatenate-reverse (string-length s)
                                                   (list 0 (cadr opt)))))
                               (string-copy s 0 end))
                             s))
                       "")))
        (own (apply string-append
                    (append (reverse (map (lambda (x) (chars-of 'textual-concatenate-reverse x)) xs))
                            (list final))))))

    (define (textual-join xs . opt)
      (if (not (list? xs)) (fail 'textual-join "a list of texts" xs))
      (let ((d (if (pair? opt) (chars-of 'textual-join (car opt)) " "))
            (grammar (if (and (pair? opt) (pair? (cdr opt))) (cadr opt) 'infix))
            (ss (map (lambda (x) (chars-of 'textual-join x)) xs)))
        (own
         (case grammar
           ((infix strict-infix)
            (if (null? ss)
                (if (eq? grammar 'strict-infix)
                    (error "textual-join: strict-infix needs at least one text")
                    "")
                (apply string-append (car ss) (apply append (map (lambda (s) (list d s)) (cdr ss))))))
           ((suffix) (apply string-append (apply append (map (lambda (s) (list s d)) ss))))
           ((prefix) (apply string-append (apply append (map (lambda (s) (list d s)) ss))))
           (else (fail 'textual-join "infix, strict-infix, suffix or prefix" grammar))))))

    ;; Fold, map and friends

    (define (textual-fold kons knil x . opt)
      (check-procedure 'textual-fold kons)
      (let-values (((s start end) (range 'textual-fold x opt)))
        (let loop ((i start) (acc knil))
          (if (= i end) acc (loop (+ i 1) (kons (string-ref s i) acc))))))

    (define (textual-fold-right kons knil x . opt)
      (check-procedure 'textual-fold-right kons)
      (let-values (((s start end) (range 'textual-fold-right x opt)))
        (let loop ((i (- end 1)) (acc knil))
          (if (< i start) acc (loop (- i 1) (kons (string-ref s i) acc))))))

    (define (textual-map proc x . xs)
      (check-procedure 'textual-map proc)
      (let* ((ss (map (lambda (x) (chars-of 'textual-map x)) (cons x xs)))
             (n (apply min (map string-length ss))))
        (let loop ((i 0) (acc '()))
          (if (= i n)
              (own (apply string-append (reverse acc)))
              (loop (+ i 1)
                    (cons (piece 'textual-map (apply proc (map (lambda (s) (string-ref s i)) ss)))
                          acc))))))

    (define (textual-for-each proc x . xs)
      (check-procedure 'textual-for-each proc)
      (let* ((ss (map (lambda (x) (chars-of 'textual-for-each x)) (cons x xs)))
             (n (apply min (map string-length ss))))
        (do ((i 0 (+ i 1))) ((= i n))
          (apply proc (map (lambda (s) (string-ref s i)) ss)))))

    (define (textual-map-index proc x . opt)
      (check-procedure 'textual-map-index proc)
      (let-values (((s start end) (range 'textual-map-index x opt)))
        (let loop ((i start) (acc '()))
          (if (= i end)
              (own (apply string-append (reverse acc)))
              (loop (+ i 1) (cons (piece 'textual-map-index (proc i)) acc))))))

    (define (textual-for-each-index proc x . opt)
      (check-procedure 'textual-for-each-index proc)
      (let-values (((s start end) (range 'textual-for-each-index x opt)))
        (do ((i start (+ i 1))) ((= i end))
          (proc i))))

    (define (textual-count x pred . opt)
      (check-procedure 'textual-count pred)
      (let-values (((s start end) (range 'textual-count x opt)))
        (let loop ((i start) (n 0))
          (if (= i end) n (loop (+ i 1) (if (pred (string-ref s i)) (+ n 1) n))))))

    (define (keep who pred x opt want)
      (check-procedure who pred)
      (let-values (((s start end) (range who x opt)))
        (let ((out (open-output-string)))
          (do ((i start (+ i 1))) ((= i end) (own (get-output-string out)))
            (let ((c (string-ref s i)))
              (if (eq? want (not (not (pred c)))) (write-char c out)))))))

    (define (textual-filter pred x . opt) (keep 'textual-filter pred x opt #t))
    (define (textual-remove pred x . opt) (keep 'textual-remove pred x opt #f))

    ;; Replication and splitting

    (define (textual-replicate x from to . opt)
      (if (not (exact-integer? from)) (fail 'textual-replicate "an exact integer" from))
      (if (not (exact-integer? to)) (fail 'textual-replicate "an exact integer" to))
      (if (> from to) (error "textual-replicate: from is greater than to" from to))
      (let-values (((s start end) (range 'textual-replicate x opt)))
        (let ((n (- end start)))
          (cond ((= from to) empty)
                ((= n 0) (error "textual-replicate: the range to replicate is empty" from to))
                (else
                 (let ((out (make-string (- to from))))
                   (do ((i from (+ i 1))) ((= i to) (own out))
                     (string-set! out (- i from) (string-ref s (+ start (modulo i n)))))))))))

    (define (textual-split x delimiter . opt)
      (let* ((d (chars-of 'textual-split delimiter))
             (grammar (if (pair? opt) (car opt) 'infix))
             (limit (if (and (pair? opt) (pair? (cdr opt))) (cadr opt) #f))
             (ranges (if (and (pair? opt) (pair? (cdr opt))) (cddr opt) '())))
        (if (not (memq grammar '(infix strict-infix prefix suffix)))
            (fail 'textual-split "infix, strict-infix, suffix or prefix" grammar))
        (if (not (or (not limit) (and (exact-integer? limit) (>= limit 0))))
            (fail 'textual-split "#f or a non-negative exact integer as the limit" limit))
        (let-values (((s start end) (range 'textual-split x ranges)))
          (let ((dlen (string-length d)))
            (cond
             ((= start end)
              (if (eq? grammar 'strict-infix)
                  (error "textual-split: strict-infix needs a non-empty text")
                  '()))
             ((= dlen 0)
              ;; one text per character, up to the limit
              (let loop ((i start) (splits 0) (acc '()))
                (cond ((= i end) (reverse acc))
                      ((and limit (= splits limit))
                       (reverse (cons (own (string-copy s i end)) acc)))
                      (else (loop (+ i 1) (+ splits 1) (cons (own (string (string-ref s i))) acc))))))
             (else
              (let loop ((from start) (splits 0) (acc '()))
                (let ((at (and (or (not limit) (< splits limit))
                               (%string-contains s d from end 0 dlen))))
                  (if at
                      (loop (+ at dlen) (+ splits 1) (cons (own (string-copy s from at)) acc))
                      (let* ((parts (reverse (cons (own (string-copy s from end)) acc)))
                             (parts (if (and (eq? grammar 'prefix) (pair? parts)
                                             (textual-null? (car parts)))
                                        (cdr parts)
                                        parts))
                             (parts (if (and (eq? grammar 'suffix) (pair? parts)
                                             (textual-null? (car (reverse parts))))
                                        (reverse (cdr (reverse parts)))
                                        parts)))
                        parts))))))))))

    (define %loaded #t)))
