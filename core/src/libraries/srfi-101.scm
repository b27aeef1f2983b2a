;; (srfi 101): random-access lists under SRFI 101's own names, which
;; are those of the ordinary list procedures (`cons`, `car`, `list?`,
;; `quote`, ...): a program imports it in place of them, e.g. with
;; (import (except (scheme base) car cdr ...) (srfi 101)). The procedures
;; are (scheme rlist)'s.
(define-library (srfi 101)
  (export (rename rquote quote) (rename rpair? pair?) (rename rcons cons)
   (rename rcar car) (rename rcdr cdr) (rename rcaar caar) (rename rcadr cadr)
   (rename rcddr cddr) (rename rcdar cdar) (rename rcaaar caaar)
   (rename rcaadr caadr) (rename rcaddr caddr) (rename rcadar cadar)
   (rename rcdaar cdaar) (rename rcdadr cdadr) (rename rcdddr cdddr)
   (rename rcddar cddar) (rename rcaaaar caaaar) (rename rcaaadr caaadr)
   (rename rcaaddr caaddr) (rename rcaadar caadar) (rename rcadaar cadaar)
   (rename rcadadr cadadr) (rename rcadddr cadddr) (rename rcaddar caddar)
   (rename rcdaaar cdaaar) (rename rcdaadr cdaadr) (rename rcdaddr cdaddr)
   (rename rcdadar cdadar) (rename rcddaar cddaar) (rename rcddadr cddadr)
   (rename rcddddr cddddr) (rename rcdddar cdddar) (rename rnull? null?)
   (rename rlist? list?) (rename rlist list) (rename rlength length)
   (rename rlength<=? length<=?) (rename rappend append)
   (rename rreverse reverse) (rename rlist-tail list-tail)
   (rename rlist-ref list-ref) (rename rlist-set list-set)
   (rename rlist-ref/update list-ref/update) (rename rmap map)
   (rename rfor-each for-each) (rename make-rlist make-list)
   (rename rlist->list random-access-list->linear-access-list)
   (rename list->rlist linear-access-list->random-access-list))
  (import (scheme rlist))
  (begin
    (define %loaded #t)))
