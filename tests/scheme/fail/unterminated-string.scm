(display "abc)
