;; (srfi 151): bitwise operations on exact integers of any size, in two's
;; complement. The basic operations are the engine's (`%bitwise-and` and
;; kin, core/src/builtins/bitwise.rs); the field operations are built on
;; them here.
(define-library (srfi 151)
  (export
   bitwise-not bitwise-and bitwise-ior bitwise-xor bitwise-eqv
   bitwise-nand bitwise-nor bitwise-andc1 bitwise-andc2 bitwise-orc1
   bitwise-orc2
   arithmetic-shift shift bit-count integer-length bitwise-if
   bit-set? copy-bit bit-swap any-bit-set? every-bit-set? first-set-bit
   bit-field bit-field-any? bit-field-every? bit-field-clear bit-field-set
   bit-field-replace bit-field-replace-same bit-field-rotate
   bit-field-reverse
   bits->list list->bits bits->vector vector->bits bits
   bitwise-fold bitwise-for-each bitwise-unfold make-bitwise-generator)
  (import (scheme base))
  (begin
    (define fail %expected)

    (define check-index %check-count)

    (define (check-field who start end)
      (check-index who start)
      (check-index who end)
      (if (> start end)
          (error (string-append (symbol->string who) ": the field's start is after its end")
                 start end)))

    (define (bitwise-not i) (%bitwise-not i))
    (define (bitwise-and . is) (apply %bitwise-and is))
    (define (bitwise-ior . is) (apply %bitwise-ior is))
    (define (bitwise-xor . is) (apply %bitwise-xor is))
    (define (bitwise-eqv . is)
      (let loop ((is is) (acc -1))
        (if (null? is)
            acc
            (loop (cdr is) (%bitwise-not (%bitwise-xor acc (car is)))))))
    (define (bitwise-nand i j) (%bitwise-not (%bitwise-and i j)))
    (define (bitwise-nor i j) (%bitwise-not (%bitwise-ior i j)))
    (define (bitwise-andc1 i j) (%bitwise-and (%bitwise-not i) j))
    (define (bitwise-andc2 i j) (%bitwise-and i (%bitwise-not j)))
    (define (bitwise-orc1 i j) (%bitwise-ior (%bitwise-not i) j))
    (define (bitwise-orc2 i j) (%bitwise-ior i (%bitwise-not j)))

    (define (arithmetic-shift i count) (%arithmetic-shift i count))
    (define (shift i count) (%arithmetic-shift i count))
    (define (bit-count i) (%bit-count i))
    (define (integer-length i) (%integer-length i))

    (define (bitwise-if mask i j)
      (%bitwise-ior (%bitwise-and mask i) (%bitwise-and (%bitwise-not mask) j)))

    (define (bit-set? index i) (%bit-set? index i))

    (define (copy-bit index i set?)
      (check-index 'copy-bit index)
      (let ((bit (%arithmetic-shift 1 index)))
        (if set?
            (%bitwise-ior i bit)
            (%bitwise-and i (%bitwise-not bit)))))

    (define (bit-swap index1 index2 i)
      (check-index 'bit-swap index1)
      (check-index 'bit-swap index2)
      (let ((b1 (%bit-set? index1 i)) (b2 (%bit-set? index2 i)))
        (copy-bit index2 (copy-bit index1 i b2) b1)))

    (define (any-bit-set? test-bits i) (not (zero? (%bitwise-and test-bits i))))
    (define (every-bit-set? test-bits i) (= test-bits (%bitwise-and test-bits i)))

    (define (first-set-bit i)
      (if (zero? i)
          (begin (%bit-count i) -1)
          (- (%integer-length (%bitwise-and i (- i))) 1)))

    ;; A mask of the `width` low bits.
    (define (mask width) (%bitwise-not (%arithmetic-shift -1 width)))

    (define (bit-field i start end)
      (check-field 'bit-field start end)
      (%bitwise-and (%arithmetic-shift i (- start)) (mask (- end start))))

    (define (bit-field-any? i start end)
      (check-field 'bit-field-any? start end)
      (not (zero? (bit-field i start end))))

    (define (bit-field-every? i start end)
      (check-field 'bit-field-every? start end)
      (= (bit-field i start end) (mask (- end start))))

    (define (field-mask start end) (%arithmetic-shift (mask (- end start)) start))

    (define (bit-field-clear i start end)
      (check-field 'bit-field-clear start end)
      (%bitwise-and i (%bitwise-not (field-mask start end))))

    (define (bit-field-set i start end)
      (check-field 'bit-field-set start end)
      (%bitwise-ior i (field-mask start end)))

    ;; The field of dest replaced by the low bits of source.
    (define (bit-field-replace dest source start end)
      (check-field 'bit-field-replace start end)
      (bitwise-if (field-mask start end)
                  (%arithmetic-shift source start)
                  dest))

    ;; The field of dest replaced by the same field of source.
    (define (bit-field-replace-same dest source start end)
      (check-field 'bit-field-replace-same start end)
      (bitwise-if (field-mask start end) source dest))

    ;; The field rotated by count bits towards the high end.
    (define (bit-field-rotate i count start end)
      (check-field 'bit-field-rotate start end)
      (if (not (exact-integer? count)) (fail 'bit-field-rotate "an exact integer" count))
      (let ((width (- end start)))
        (if (= width 0)
            i
            (let* ((n (modulo count width))
                   (field (bit-field i start end))
                   (rotated (%bitwise-ior
                             (%bitwise-and (%arithmetic-shift field n) (mask width))
                             (%arithmetic-shift field (- n width)))))
              (bit-field-replace i rotated start end)))))

    (define (bit-field-reverse i start end)
      (check-field 'bit-field-reverse start end)
      (let loop ((k 0) (field (bit-field i start end)) (acc 0))
        (if (= k (- end start))
            (bit-field-replace i acc start end)
            (loop (+ k 1) (%arithmetic-shift field -1)
                  (%bitwise-ior (%arithmetic-shift acc 1) (%bitwise-and field 1))))))

    ;; ---- bits as lists and vectors -------------------------------------------

    ;; (bits->list I [LENGTH]): the bits from the lowest, as booleans.
    (define (bits->list i . len)
      (let ((n (if (pair? len) (car len) (%integer-length i))))
        (check-index 'bits->list n)
        (let loop ((k (- n 1)) (acc '()))
          (if (< k 0) acc (loop (- k 1) (cons (%bit-set? k i) acc))))))

    (define (bits->vector i . len) (list->vector (apply bits->list i len)))

    (define (list->bits l)
      (let loop ((l (reverse l)) (acc 0))
        (cond ((null? l) acc)
              ((boolean? (car l))
               (loop (cdr l) (%bitwise-ior (%arithmetic-shift acc 1) (if (car l) 1 0))))
              (else (fail 'list->bits "a list of booleans" (car l))))))

    (define (vector->bits v)
      (if (not (vector? v)) (fail 'vector->bits "a vector" v))
      (list->bits (vector->list v)))

    (define (bits . bools) (list->bits bools))

    ;; ---- folds and generators ------------------------------------------------

    (define (bitwise-fold proc seed i)
      (let ((n (%integer-length i)))
        (let loop ((k 0) (acc seed))
          (if (= k n) acc (loop (+ k 1) (proc (%bit-set? k i) acc))))))

    (define (bitwise-for-each proc i)
      (let ((n (%integer-length i)))
        (let loop ((k 0))
          (if (< k n) (begin (proc (%bit-set? k i)) (loop (+ k 1)))))))

    (define (bitwise-unfold stop? mapper successor seed)
      (let loop ((s seed) (k 0) (acc 0))
        (if (stop? s)
            acc
            (loop (successor s) (+ k 1)
                  (if (mapper s) (%bitwise-ior acc (%arithmetic-shift 1 k)) acc)))))

    ;; The bits of i from the lowest, forever.
    (define (make-bitwise-generator i)
      (%bit-count i)
      (let ((k 0))
        (lambda ()
          (let ((b (%bit-set? k i)))
            (set! k (+ k 1))
            b))))

    (define %loaded #t)))
