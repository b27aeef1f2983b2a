;; (srfi 13): the string library. Every procedure that takes optional
;; START and END checks them (0 <= start <= end <= length) and names itself
;; and the bad bound in its error. Where SRFI 13 takes a
;; "char/char-set/pred" argument, a character matches itself, a char-set
;; its members, a procedure what it accepts; searches by character or
;; char-set are native (`%cs-find`), as are `string-contains` and the
;; engine's own string primitives the library builds on. `string-map` and
;; `string-for-each` take SRFI 13's (proc s [start end]) and also R7RS's
;; (proc s1 s2 ...); `string-filter` and `string-delete` take their string
;; first (SRFI 13) or second (SRFI 130's order). `let-string-start+end`
;; is syntax of the prelude's, exported from here.
(define-library (srfi 13)
  (export
   ;; predicates
   string? string-null? string-every string-any
   ;; constructors
   make-string string string-tabulate
   ;; list and string conversion
   string->list list->string reverse-list->string string-join
   ;; selection
   string-length string-ref string-copy substring/shared string-copy!
   string-take string-take-right string-drop string-drop-right
   string-pad string-pad-right string-trim string-trim-right string-trim-both
   ;; modification
   string-set! string-fill!
   ;; comparison
   string-compare string-compare-ci
   string<> string= string< string> string<= string>=
   string-ci<> string-ci= string-ci< string-ci> string-ci<= string-ci>=
   string-hash string-hash-ci
   ;; prefixes and suffixes
   string-prefix-length string-suffix-length
   string-prefix-length-ci string-suffix-length-ci
   string-prefix? string-suffix? string-prefix-ci? string-suffix-ci?
   ;; searching
   string-index string-index-right string-skip string-skip-right
   string-count string-contains string-contains-ci
   ;; case
   string-titlecase string-upcase string-downcase
   string-titlecase! string-upcase! string-downcase!
   ;; reverse and append
   string-reverse string-reverse! string-append string-append/shared
   string-concatenate string-concatenate/shared
   string-concatenate-reverse string-concatenate-reverse/shared
   ;; fold, unfold and map
   string-map string-map! string-fold string-fold-right
   string-unfold string-unfold-right string-for-each string-for-each-index
   ;; replicate and rotate
   xsubstring string-xcopy!
   ;; miscellaneous
   string-replace string-tokenize
   ;; filtering
   string-filter string-delete
   ;; low-level
   string-parse-start+end string-parse-final-start+end let-string-start+end
   check-substring-spec substring-spec-ok?
   make-kmp-restart-vector kmp-step string-kmp-partial-search)
  (import (rename (scheme base)
                  (string-map r7rs-string-map)
                  (string-for-each r7rs-string-for-each)
                  (string-copy r7rs-string-copy))
          (rename (scheme char)
                  (string-upcase r7rs-string-upcase)
                  (string-downcase r7rs-string-downcase))
          (scheme charset))
  (begin
    (define (who-string who) (symbol->string who))

    (define (fail who what got)
      (error (string-append (who-string who) ": expected " what) got))

    (define (check-string who s)
      (if (not (string? s)) (fail who "a string" s)))

    (define check-procedure %check-procedure)

    (define (check-index who what k)
      (if (not (and (exact-integer? k) (>= k 0)))
          (fail who (string-append "a non-negative exact integer " what) k)))

    ;; Checks start and end against s; the error says which bound is bad.
    (define (check-bounds who s start end)
      (let ((n (string-length s)))
        (if (not (exact-integer? start))
            (fail who "an exact integer start" start))
        (if (not (exact-integer? end))
            (fail who "an exact integer end" end))
        (cond ((or (< start 0) (> start n))
               (error (string-append (who-string who) ": start "
                                     (number->string start)
                                     " is out of range for a string of length "
                                     (number->string n))
                      s start))
              ((or (< end start) (> end n))
               (error (string-append (who-string who) ": end "
                                     (number->string end)
                                     " is out of range (start "
                                     (number->string start) ", length "
                                     (number->string n) ")")
                      s end)))))

    ;; (string-parse-start+end proc s args): start, end and the rest of args.
    (define (string-parse-start+end proc s args)
      (check-string proc s)
      (let* ((n (string-length s))
             (start (if (pair? args) (car args) 0))
             (rest (if (pair? args) (cdr args) '()))
             (end (if (pair? rest) (car rest) n))
             (rest (if (pair? rest) (cdr rest) '())))
        (check-bounds proc s start end)
        (values start end rest)))

    ;; The same; more arguments are an error.
    (define (string-parse-final-start+end proc s args)
      (let-values (((start end rest) (string-parse-start+end proc s args)))
        (if (pair? rest)
            (error (string-append (who-string proc) ": too many arguments") rest))
        (values start end)))

    (define (substring-spec-ok? s start end)
      (and (string? s) (exact-integer? start) (exact-integer? end)
           (<= 0 start end (string-length s))))

    (define (check-substring-spec proc s start end)
      (check-string proc s)
      (check-bounds proc s start end))

    ;; The optional start and end of opt, checked.
    (define (bounds who s opt)
      (string-parse-final-start+end who s opt))

    ;; Two strings' optional start1 end1 start2 end2.
    (define (bounds2 who s1 s2 opt)
      (check-string who s1)
      (check-string who s2)
      (let-values (((start1 end1 rest) (string-parse-start+end who s1 opt)))
        (let-values (((start2 end2) (string-parse-final-start+end who s2 rest)))
          (values start1 end1 start2 end2))))

    ;; ---- char/char-set/pred ----------------------------------------------------

    ;; The char-set a character or a char-set stands for, or #f for a
    ;; predicate.
    (define (criterion-set who x)
      (cond ((char? x) (char-set x))
            ((char-set? x) x)
            ((procedure? x) #f)
            (else (fail who "a character, a char-set or a predicate" x))))

    ;; The index of the first (or last) character of s[start, end) that
    ;; matches x (or, with want #f, that does not), or #f.
    (define (find who x s start end want right)
      (let ((cs (criterion-set who x)))
        (if cs
            (%cs-find s start end (|cs-ranges@(scheme charset)| cs) want right)
            (if right
                (let loop ((i (- end 1)))
                  (cond ((< i start) #f)
                        ((eq? (not (x (string-ref s i))) (not want)) i)
                        (else (loop (- i 1)))))
                (let loop ((i start))
                  (cond ((>= i end) #f)
                        ((eq? (not (x (string-ref s i))) (not want)) i)
                        (else (loop (+ i 1)))))))))

    ;; The predicate x stands for.
    (define (matcher who x)
      (let ((cs (criterion-set who x)))
        (if cs (lambda (c) (char-set-contains? cs c)) x)))

    ;; ---- predicates ------------------------------------------------------------

    (define (string-null? s)
      (check-string 'string-null? s)
      (= 0 (string-length s)))

    (define (string-every x s . opt)
      (let-values (((start end) (bounds 'string-every s opt)))
        (if (procedure? x)
            (let loop ((i start) (last #t))
              (if (>= i end)
                  last
                  (let ((v (x (string-ref s i))))
                    (and v (loop (+ i 1) v)))))
            (not (find 'string-every x s start end #f #f)))))

    (define (string-any x s . opt)
      (let-values (((start end) (bounds 'string-any s opt)))
        (if (procedure? x)
            (let loop ((i start))
              (and (< i end)
                   (or (x (string-ref s i)) (loop (+ i 1)))))
            (and (find 'string-any x s start end #t #f) #t))))

    ;; ---- constructors and conversion ---------------------------------------------

    (define (string-tabulate proc len)
      (check-procedure 'string-tabulate proc)
      (check-index 'string-tabulate "length" len)
      (let ((s (make-string len)))
        (do ((i 0 (+ i 1))) ((= i len) s)
          (let ((c (proc i)))
            (if (not (char? c)) (fail 'string-tabulate "a character from proc" c))
            (string-set! s i c)))))

    (define (reverse-list->string chars)
      (list->string (reverse chars)))

    (define (string-join strings . opt)
      (let ((delim (if (pair? opt) (car opt) " "))
            (grammar (if (and (pair? opt) (pair? (cdr opt))) (cadr opt) 'infix)))
        (check-string 'string-join delim)
        (if (not (list? strings)) (fail 'string-join "a list of strings" strings))
        (for-each (lambda (s) (check-string 'string-join s)) strings)
        (case grammar
          ((infix) (%join strings delim))
          ((strict-infix)
           (if (null? strings)
               (error "string-join: strict-infix grammar needs at least one string"))
           (%join strings delim))
          ((suffix)
           (apply string-append (map (lambda (s) (string-append s delim)) strings)))
          ((prefix)
           (apply string-append (map (lambda (s) (string-append delim s)) strings)))
          (else (fail 'string-join "one of infix, strict-infix, suffix or prefix" grammar)))))

    (define (%join strings delim)
      (if (null? strings)
          ""
          (let loop ((acc (list (car strings))) (rest (cdr strings)))
            (if (null? rest)
                (apply string-append (reverse acc))
                (loop (cons (car rest) (cons delim acc)) (cdr rest))))))

    ;; ---- selection -------------------------------------------------------------

    (define (string-copy s . opt)
      (let-values (((start end) (bounds 'string-copy s opt)))
        (r7rs-string-copy s start end)))

    (define (substring/shared s start . opt)
      (let-values (((start end) (bounds 'substring/shared s (cons start opt))))
        (r7rs-string-copy s start end)))

    (define (take-count who s n)
      (check-string who s)
      (if (not (and (exact-integer? n) (<= 0 n (string-length s))))
          (error (string-append (who-string who) ": count "
                                (if (number? n) (number->string n) "")
                                " is out of range for a string of length "
                                (number->string (string-length s)))
                 s n)))

    (define (string-take s n)
      (take-count 'string-take s n)
      (r7rs-string-copy s 0 n))

    (define (string-drop s n)
      (take-count 'string-drop s n)
      (r7rs-string-copy s n))

    (define (string-take-right s n)
      (take-count 'string-take-right s n)
      (r7rs-string-copy s (- (string-length s) n)))

    (define (string-drop-right s n)
      (take-count 'string-drop-right s n)
      (r7rs-string-copy s 0 (- (string-length s) n)))

    ;; (string-pad s n [char start end]): the rightmost n characters, padded
    ;; on the left.
    (define (pad-args who s n opt)
      (check-string who s)
      (check-index who "length" n)
      (let ((c (if (pair? opt) (car opt) #\space)))
        (if (not (char? c)) (fail who "a character" c))
        (let-values (((start end) (bounds who s (if (pair? opt) (cdr opt) '()))))
          (values c start end))))

    (define (string-pad s n . opt)
      (let-values (((c start end) (pad-args 'string-pad s n opt)))
        (let ((len (- end start)))
          (if (<= n len)
              (r7rs-string-copy s (- end n) end)
              (string-append (make-string (- n len) c) (r7rs-string-copy s start end))))))

    (define (string-pad-right s n . opt)
      (let-values (((c start end) (pad-args 'string-pad-right s n opt)))
        (let ((len (- end start)))
          (if (<= n len)
              (r7rs-string-copy s start (+ start n))
              (string-append (r7rs-string-copy s start end) (make-string (- n len) c))))))

    ;; (string-trim s [char/char-set/pred start end]), whitespace by default.
    (define (trim-args who s opt)
      (check-string who s)
      (let ((x (if (pair? opt) (car opt) char-set:whitespace)))
        (criterion-set who x)
        (let-values (((start end) (bounds who s (if (pair? opt) (cdr opt) '()))))
          (values x start end))))

    (define (string-trim s . opt)
      (let-values (((x start end) (trim-args 'string-trim s opt)))
        (let ((i (find 'string-trim x s start end #f #f)))
          (if i (r7rs-string-copy s i end) ""))))

    (define (string-trim-right s . opt)
      (let-values (((x start end) (trim-args 'string-trim-right s opt)))
        (let ((i (find 'string-trim-right x s start end #f #t)))
          (if i (r7rs-string-copy s start (+ i 1)) ""))))

    (define (string-trim-both s . opt)
      (let-values (((x start end) (trim-args 'string-trim-both s opt)))
        (let ((i (find 'string-trim-both x s start end #f #f)))
          (if i
              (r7rs-string-copy s i (+ 1 (find 'string-trim-both x s i end #f #t)))
              ""))))

    ;; ---- comparison --------------------------------------------------------------

    ;; The index in s1 where s1[start1, end1) and s2[start2, end2) first
    ;; differ, and how: -1, 0 or 1.
    (define (mismatch s1 start1 end1 s2 start2 end2 ci)
      (let ((same? (if ci char-ci=? char=?))
            (less? (if ci char-ci<? char<?)))
        (let loop ((i start1) (j start2))
          (cond ((and (= i end1) (= j end2)) (values i 0))
                ((= i end1) (values i -1))
                ((= j end2) (values i 1))
                ((same? (string-ref s1 i) (string-ref s2 j)) (loop (+ i 1) (+ j 1)))
                ((less? (string-ref s1 i) (string-ref s2 j)) (values i -1))
                (else (values i 1))))))

    (define (compare who ci s1 s2 lt eq gt opt)
      (check-procedure who lt)
      (check-procedure who eq)
      (check-procedure who gt)
      (let-values (((start1 end1 start2 end2) (bounds2 who s1 s2 opt)))
        (let-values (((i order) (mismatch s1 start1 end1 s2 start2 end2 ci)))
          (case order ((-1) (lt i)) ((0) (eq i)) (else (gt i))))))

    (define (string-compare s1 s2 lt eq gt . opt)
      (compare 'string-compare #f s1 s2 lt eq gt opt))

    (define (string-compare-ci s1 s2 lt eq gt . opt)
      (compare 'string-compare-ci #f
               (string-foldcase s1) (string-foldcase s2) lt eq gt opt))

    (define (order who ci s1 s2 opt)
      (let-values (((start1 end1 start2 end2) (bounds2 who s1 s2 opt)))
        (let-values (((i o) (mismatch s1 start1 end1 s2 start2 end2 ci)))
          o)))

    (define (string= s1 s2 . o) (= 0 (order 'string= #f s1 s2 o)))
    (define (string<> s1 s2 . o) (not (= 0 (order 'string<> #f s1 s2 o))))
    (define (string< s1 s2 . o) (= -1 (order 'string< #f s1 s2 o)))
    (define (string> s1 s2 . o) (= 1 (order 'string> #f s1 s2 o)))
    (define (string<= s1 s2 . o) (not (= 1 (order 'string<= #f s1 s2 o))))
    (define (string>= s1 s2 . o) (not (= -1 (order 'string>= #f s1 s2 o))))
    (define (string-ci= s1 s2 . o) (= 0 (order 'string-ci= #t s1 s2 o)))
    (define (string-ci<> s1 s2 . o) (not (= 0 (order 'string-ci<> #t s1 s2 o))))
    (define (string-ci< s1 s2 . o) (= -1 (order 'string-ci< #t s1 s2 o)))
    (define (string-ci> s1 s2 . o) (= 1 (order 'string-ci> #t s1 s2 o)))
    (define (string-ci<= s1 s2 . o) (not (= 1 (order 'string-ci<= #t s1 s2 o))))
    (define (string-ci>= s1 s2 . o) (not (= -1 (order 'string-ci>= #t s1 s2 o))))

    ;; (string-hash s [bound start end]): in [0, bound); bound 0 or absent
    ;; is the default bound.
    (define (hash who kind s opt)
      (check-string who s)
      (let ((bound (if (and (pair? opt) (not (eqv? (car opt) 0))) (car opt) 4194304)))
        (if (not (and (exact-integer? bound) (> bound 0)))
            (fail who "a positive exact integer bound" bound))
        (let-values (((start end) (bounds who s (if (pair? opt) (cdr opt) '()))))
          (modulo (%hash who kind (r7rs-string-copy s start end)) bound))))

    (define (string-hash s . opt) (hash 'string-hash 3 s opt))
    (define (string-hash-ci s . opt) (hash 'string-hash-ci 4 s opt))

    ;; ---- prefixes and suffixes -------------------------------------------------------

    (define (prefix-length who ci s1 s2 opt)
      (let-values (((start1 end1 start2 end2) (bounds2 who s1 s2 opt)))
        (let ((same? (if ci char-ci=? char=?)))
          (let loop ((i start1) (j start2) (n 0))
            (if (and (< i end1) (< j end2) (same? (string-ref s1 i) (string-ref s2 j)))
                (loop (+ i 1) (+ j 1) (+ n 1))
                n)))))

    (define (suffix-length who ci s1 s2 opt)
      (let-values (((start1 end1 start2 end2) (bounds2 who s1 s2 opt)))
        (let ((same? (if ci char-ci=? char=?)))
          (let loop ((i (- end1 1)) (j (- end2 1)) (n 0))
            (if (and (>= i start1) (>= j start2)
                     (same? (string-ref s1 i) (string-ref s2 j)))
                (loop (- i 1) (- j 1) (+ n 1))
                n)))))

    (define (string-prefix-length s1 s2 . o) (prefix-length 'string-prefix-length #f s1 s2 o))
    (define (string-suffix-length s1 s2 . o) (suffix-length 'string-suffix-length #f s1 s2 o))
    (define (string-prefix-length-ci s1 s2 . o)
      (prefix-length 'string-prefix-length-ci #t s1 s2 o))
    (define (string-suffix-length-ci s1 s2 . o)
      (suffix-length 'string-suffix-length-ci #t s1 s2 o))

    ;; Is s1[start1, end1) a prefix (suffix) of s2[start2, end2)?
    (define (affix? who ci suffix s1 s2 opt)
      (let-values (((start1 end1 start2 end2) (bounds2 who s1 s2 opt)))
        (let ((n (if suffix
                     (suffix-length who ci s1 s2 opt)
                     (prefix-length who ci s1 s2 opt))))
          (= n (- end1 start1)))))

    (define (string-prefix? s1 s2 . o) (affix? 'string-prefix? #f #f s1 s2 o))
    (define (string-suffix? s1 s2 . o) (affix? 'string-suffix? #f #t s1 s2 o))
    (define (string-prefix-ci? s1 s2 . o) (affix? 'string-prefix-ci? #t #f s1 s2 o))
    (define (string-suffix-ci? s1 s2 . o) (affix? 'string-suffix-ci? #t #t s1 s2 o))

    ;; ---- searching ---------------------------------------------------------------

    ;; The first (right: the last) index of s[start, end) whose character x
    ;; matches (want #t) or does not (want #f), for procedure `who` with
    ;; its optional arguments `opt`. Each search below is a `define` of its
    ;; own, so that its arity errors name it.
    (define (seek who s x opt want right)
      (let-values (((start end) (bounds who s opt)))
        (find who x s start end want right)))

    (define (string-index s x . opt) (seek 'string-index s x opt #t #f))
    (define (string-index-right s x . opt) (seek 'string-index-right s x opt #t #t))
    (define (string-skip s x . opt) (seek 'string-skip s x opt #f #f))
    (define (string-skip-right s x . opt) (seek 'string-skip-right s x opt #f #t))

    (define (string-count s x . opt)
      (let-values (((start end) (bounds 'string-count s opt)))
        (let ((match? (matcher 'string-count x)))
          (let loop ((i start) (n 0))
            (if (>= i end)
                n
                (loop (+ i 1) (if (match? (string-ref s i)) (+ n 1) n)))))))

    ;; The index in s1 of the first occurrence of s2[start2, end2) within
    ;; s1[start1, end1), or #f: natively, or case-blind by Knuth-Morris-Pratt.
    (define (search who ci s1 s2 opt)
      (let-values (((start1 end1 start2 end2) (bounds2 who s1 s2 opt)))
        (if (not ci)
            (%string-contains s1 s2 start1 end1 start2 end2)
            (let* ((m (- end2 start2))
                   (rv (make-kmp-restart-vector s2 char-ci=? start2 end2)))
              (let loop ((i start1) (j 0))
                (cond ((= j m) (- i m))
                      ((> (- m j) (- end1 i)) #f)
                      (else (loop (+ i 1)
                                  (kmp-step s2 rv (string-ref s1 i) j
                                            char-ci=? start2)))))))))

    (define (string-contains s1 s2 . o) (search 'string-contains #f s1 s2 o))
    (define (string-contains-ci s1 s2 . o) (search 'string-contains-ci #t s1 s2 o))

    ;; ---- case ----------------------------------------------------------------------

    (define (map-range who f s opt)
      (let-values (((start end) (bounds who s opt)))
        (let ((out (r7rs-string-copy s start end)))
          (do ((i 0 (+ i 1))) ((= i (- end start)) out)
            (string-set! out i (f (string-ref out i)))))))

    (define (map-range! who f s opt)
      (let-values (((start end) (bounds who s opt)))
        (do ((i start (+ i 1))) ((= i end))
          (string-set! s i (f (string-ref s i))))))

    (define (string-upcase s . opt)
      (if (null? opt) (r7rs-string-upcase s) (map-range 'string-upcase char-upcase s opt)))

    (define (string-downcase s . opt)
      (if (null? opt) (r7rs-string-downcase s) (map-range 'string-downcase char-downcase s opt)))

    (define (string-upcase! s . opt) (map-range! 'string-upcase! char-upcase s opt))
    (define (string-downcase! s . opt) (map-range! 'string-downcase! char-downcase s opt))

    (define (cased? c) (or (char-upper-case? c) (char-lower-case? c) (char-alphabetic? c)))

    ;; Each character preceded by a cased one is downcased, every other
    ;; one titlecased (here: upcased, as Unicode's title case of most
    ;; letters is their upper case).
    (define (titlecase! s start end)
      (let loop ((i start) (after-cased #f))
        (if (< i end)
            (let ((c (string-ref s i)))
              (string-set! s i (if after-cased (char-downcase c) (char-upcase c)))
              (loop (+ i 1) (cased? c))))))

    (define (string-titlecase s . opt)
      (let-values (((start end) (bounds 'string-titlecase s opt)))
        (let ((out (r7rs-string-copy s start end)))
          (titlecase! out 0 (- end start))
          out)))

    (define (string-titlecase! s . opt)
      (let-values (((start end) (bounds 'string-titlecase! s opt)))
        (titlecase! s start end)))

    ;; ---- reverse and append --------------------------------------------------------

    (define (string-reverse s . opt)
      (let-values (((start end) (bounds 'string-reverse s opt)))
        (list->string (reverse (string->list s start end)))))

    (define (string-reverse! s . opt)
      (let-values (((start end) (bounds 'string-reverse! s opt)))
        (let loop ((i start) (j (- end 1)))
          (if (< i j)
              (let ((c (string-ref s i)))
                (string-set! s i (string-ref s j))
                (string-set! s j c)
                (loop (+ i 1) (- j 1)))))))

    (define (string-append/shared . strings) (apply string-append strings))

    (define (string-concatenate strings)
      (if (not (list? strings)) (fail 'string-concatenate "a list of strings" strings))
      (apply string-append strings))

    (define (string-concatenate/shared strings) (string-concatenate strings))

    ;; (string-concatenate-reverse strings [final end])
    (define (string-concatenate-reverse strings . opt)
      (if (not (list? strings))
          (fail 'string-concatenate-reverse "a list of strings" strings))
      (let* ((final (if (pair? opt) (car opt) ""))
             (end (if (and (pair? opt) (pair? (cdr opt))) (cadr opt) #f)))
        (check-string 'string-concatenate-reverse final)
        (let ((end (or end (string-length final))))
          (check-bounds 'string-concatenate-reverse final 0 end)
          (apply string-append
                 (append (reverse strings) (list (r7rs-string-copy final 0 end)))))))

    (define (string-concatenate-reverse/shared strings . opt)
      (apply string-concatenate-reverse strings opt))

    ;; ---- fold, unfold and map ----------------------------------------------------------

    ;; R7RS's form when the arguments after the first string are strings.
    (define (r7rs-form? opt) (and (pair? opt) (string? (car opt))))

    (define (string-map proc s . opt)
      (check-procedure 'string-map proc)
      (if (r7rs-form? opt)
          (apply r7rs-string-map proc s opt)
          (map-range 'string-map
                     (lambda (c)
                       (let ((r (proc c)))
                         (if (not (char? r)) (fail 'string-map "a character from proc" r))
                         r))
                     s opt)))

    (define (string-map! proc s . opt)
      (check-procedure 'string-map! proc)
      (map-range! 'string-map!
                  (lambda (c)
                    (let ((r (proc c)))
                      (if (not (char? r)) (fail 'string-map! "a character from proc" r))
                      r))
                  s opt))

    (define (string-for-each proc s . opt)
      (check-procedure 'string-for-each proc)
      (if (r7rs-form? opt)
          (apply r7rs-string-for-each proc s opt)
          (let-values (((start end) (bounds 'string-for-each s opt)))
            (do ((i start (+ i 1))) ((= i end))
              (proc (string-ref s i))))))

    (define (string-for-each-index proc s . opt)
      (check-procedure 'string-for-each-index proc)
      (let-values (((start end) (bounds 'string-for-each-index s opt)))
        (do ((i start (+ i 1))) ((= i end))
          (proc i))))

    (define (string-fold kons knil s . opt)
      (check-procedure 'string-fold kons)
      (let-values (((start end) (bounds 'string-fold s opt)))
        (let loop ((i start) (acc knil))
          (if (= i end) acc (loop (+ i 1) (kons (string-ref s i) acc))))))

    (define (string-fold-right kons knil s . opt)
      (check-procedure 'string-fold-right kons)
      (let-values (((start end) (bounds 'string-fold-right s opt)))
        (let loop ((i (- end 1)) (acc knil))
          (if (< i start) acc (loop (- i 1) (kons (string-ref s i) acc))))))

    ;; (string-unfold stop? mapper successor seed [base make-final])
    (define (unfold-args who p f g opt)
      (check-procedure who p)
      (check-procedure who f)
      (check-procedure who g)
      (let ((base (if (pair? opt) (car opt) ""))
            (make-final (if (and (pair? opt) (pair? (cdr opt))) (cadr opt) (lambda (x) ""))))
        (check-string who base)
        (check-procedure who make-final)
        (values base make-final)))

    (define (unfold-char who f seed)
      (let ((c (f seed)))
        (if (not (char? c)) (fail who "a character from the mapper" c))
        c))

    (define (string-unfold p f g seed . opt)
      (let-values (((base make-final) (unfold-args 'string-unfold p f g opt)))
        (let loop ((seed seed) (acc '()))
          (if (p seed)
              (let ((final (make-final seed)))
                (check-string 'string-unfold final)
                (string-append base (list->string (reverse acc)) final))
              (loop (g seed) (cons (unfold-char 'string-unfold f seed) acc))))))

    (define (string-unfold-right p f g seed . opt)
      (let-values (((base make-final) (unfold-args 'string-unfold-right p f g opt)))
        (let loop ((seed seed) (acc '()))
          (if (p seed)
              (let ((final (make-final seed)))
                (check-string 'string-unfold-right final)
                (string-append final (list->string acc) base))
              (loop (g seed) (cons (unfold-char 'string-unfold-right f seed) acc))))))

    ;; ---- replicate and rotate --------------------------------------------------------

    ;; The characters from index `from` to `to` of s[start, end) repeated
    ;; without end in both directions.
    (define (x-chars who s from to start end)
      (if (not (exact-integer? from)) (fail who "an exact integer from" from))
      (if (not (and (exact-integer? to) (<= from to)))
          (fail who "an exact integer to, not below from" to))
      (let ((n (- end start)))
        (if (and (= n 0) (< from to))
            (error (string-append (who-string who)
                                  ": the selected substring is empty")
                   s start end))
        (let loop ((k (- to 1)) (acc '()))
          (if (< k from)
              acc
              (loop (- k 1) (cons (string-ref s (+ start (modulo k n))) acc))))))

    ;; (xsubstring s from [to start end])
    (define (xsubstring s from . opt)
      (check-string 'xsubstring s)
      (let-values (((start end) (bounds 'xsubstring s (if (pair? opt) (cdr opt) '()))))
        (let ((to (if (pair? opt) (car opt) (and (exact-integer? from)
                                                  (+ from (- end start))))))
          (list->string (x-chars 'xsubstring s from to start end)))))

    ;; (string-xcopy! target tstart s sfrom [sto start end])
    (define (string-xcopy! target tstart s sfrom . opt)
      (check-string 'string-xcopy! target)
      (check-string 'string-xcopy! s)
      (let-values (((start end) (bounds 'string-xcopy! s (if (pair? opt) (cdr opt) '()))))
        (let* ((sto (if (pair? opt) (car opt) (and (exact-integer? sfrom)
                                                   (+ sfrom (- end start)))))
               (chars (x-chars 'string-xcopy! s sfrom sto start end)))
          (check-index 'string-xcopy! "tstart" tstart)
          (if (> (+ tstart (length chars)) (string-length target))
              (error "string-xcopy!: the characters do not fit in the target"
                     tstart (length chars) (string-length target)))
          (let loop ((i tstart) (chars chars))
            (if (pair? chars)
                (begin (string-set! target i (car chars))
                       (loop (+ i 1) (cdr chars))))))))

    ;; ---- miscellaneous -----------------------------------------------------------------

    ;; (string-replace s1 s2 start1 end1 [start2 end2])
    (define (string-replace s1 s2 start1 end1 . opt)
      (check-substring-spec 'string-replace s1 start1 end1)
      (let-values (((start2 end2) (bounds 'string-replace s2 opt)))
        (string-append (r7rs-string-copy s1 0 start1)
                       (r7rs-string-copy s2 start2 end2)
                       (r7rs-string-copy s1 end1))))

    ;; (string-tokenize s [token-set start end])
    (define (string-tokenize s . opt)
      (check-string 'string-tokenize s)
      (let ((cs (if (pair? opt) (car opt) char-set:graphic)))
        (if (not (char-set? cs)) (fail 'string-tokenize "a char-set" cs))
        (let-values (((start end) (bounds 'string-tokenize s (if (pair? opt) (cdr opt) '()))))
          (let ((r (|cs-ranges@(scheme charset)| cs)))
            (let loop ((i start) (acc '()))
              (let ((b (%cs-find s i end r #t #f)))
                (if (not b)
                    (reverse acc)
                    (let ((e (or (%cs-find s b end r #f #f) end)))
                      (loop e (cons (r7rs-string-copy s b e) acc))))))))))

    ;; ---- filtering ---------------------------------------------------------------------

    ;; SRFI 13 takes the string first; SRFI 130 and later SRFIs the
    ;; criterion first: both are accepted.
    (define (filter-chars who keep a b opt)
      (let-values (((s x) (if (string? a) (values a b) (values b a))))
        (check-string who s)
        (let-values (((start end) (bounds who s opt)))
          (let ((match? (matcher who x)))
            (let loop ((i (- end 1)) (acc '()))
              (if (< i start)
                  (list->string acc)
                  (let ((c (string-ref s i)))
                    (loop (- i 1)
                          (if (eq? (not (match? c)) (not keep)) (cons c acc) acc)))))))))

    (define (string-filter a b . opt) (filter-chars 'string-filter #t a b opt))
    (define (string-delete a b . opt) (filter-chars 'string-delete #f a b opt))

    ;; ---- Knuth-Morris-Pratt ------------------------------------------------------------

;; (make-kmp-restart-vector pattern [c= start end]): having matched i
    ;; characters of pattern[start, end) and failed on the next, matching
    ;; goes on from rv[i] matched characters, or with the next character
    ;; of the text when rv[i] is -1 (SRFI 13's vector: a restart that would
    ;; compare the same character again is skipped).
    (define (make-kmp-restart-vector pattern . opt)
      (check-string 'make-kmp-restart-vector pattern)
      (let ((same? (if (pair? opt) (car opt) char=?)))
        (check-procedure 'make-kmp-restart-vector same?)
        (let-values (((start end) (bounds 'make-kmp-restart-vector pattern
                                          (if (pair? opt) (cdr opt) '()))))
          (let* ((m (- end start))
                 (rv (make-vector m -1))
                 (p (lambda (i) (string-ref pattern (+ start i)))))
            ;; j: the length of a border of p[0, i] (or -1), being extended.
            (let next ((i 0) (j -1))
              (if (< i (- m 1))
                  (let try ((j j))
                    (cond ((= j -1)
                           (if (not (same? (p (+ i 1)) (p 0)))
                               (vector-set! rv (+ i 1) 0))
                           (next (+ i 1) 0))
                          ((same? (p i) (p j))
                           (vector-set! rv (+ i 1) (+ j 1))
                           (next (+ i 1) (+ j 1)))
                          (else (try (vector-ref rv j)))))))
            rv))))

    ;; (kmp-step pat rv c i c= p-start): the number of pattern characters
    ;; matched after c, having matched i.
    (define (kmp-step pat rv c i same? p-start)
      (let loop ((i i))
        (if (same? c (string-ref pat (+ i p-start)))
            (+ i 1)
            (let ((i (vector-ref rv i)))
              (if (= i -1) 0 (loop i))))))

    ;; (string-kmp-partial-search pat rv s i [c= p-start s-start s-end]):
    ;; the match of pat continued over s[s-start, s-end) from i matched
    ;; characters: the index in s just past a complete match, or the
    ;; negated number of pattern characters matched at the end.
    (define (string-kmp-partial-search pat rv s i . opt)
      (check-string 'string-kmp-partial-search pat)
      (check-string 'string-kmp-partial-search s)
      (let* ((same? (if (pair? opt) (car opt) char=?))
             (opt (if (pair? opt) (cdr opt) '()))
             (p-start (if (pair? opt) (car opt) 0))
             (opt (if (pair? opt) (cdr opt) '())))
        (let-values (((s-start s-end) (bounds 'string-kmp-partial-search s opt)))
          (let ((patlen (vector-length rv)))
            (let loop ((si s-start) (pi i))
              (cond ((= pi patlen) si)
                    ((= si s-end) (- pi))
                    (else (loop (+ si 1)
                                (kmp-step pat rv (string-ref s si) pi same? p-start)))))))))

    (define %loaded #t)))
