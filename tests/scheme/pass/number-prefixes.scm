;; Number prefixes (R7RS 7.1.1): a number has at most one radix prefix
;; (#b #o #d #x) and at most one exactness prefix (#e #i), in either order.
(write (list #e#x10 #x#e10 #i#x10 #x#i10 #e#b101 #b#e101 #d#i1/2)) (newline)
(write (map string->number '("#e#x10" "#x#e10" "#i#o17" "#o#i17" "#X#E10"))) (newline)
;; Two of a kind are no number.
(write (map string->number
            '("#x#x1" "#x#d1" "#b#o1" "#d#d1" "#e#e1" "#i#e1" "#e#x#e1" "#x#e#x1")))
(newline)
(write (guard (e ((read-error? e) 'read-error)) (read (open-input-string "#x#x1")))) (newline)
;; A prefix in the text overrides the radix given to string->number.
(write (list (string->number "#d10" 16) (string->number "10" 16) (string->number "#x#e10" 2)))
(newline)
