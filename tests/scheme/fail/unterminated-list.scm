(display "x"
