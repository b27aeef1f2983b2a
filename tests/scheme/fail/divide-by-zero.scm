(let loop ((i 0)) (if (< i 10) (loop (+ i 1)) (/ i 0)))
