(display "before")
(car (quote ()))
