;; (scheme time) reads the clock the host passes in; features lists ours.
(import (scheme time))
(write (list (real? (current-second)) (exact-integer? (current-jiffy)) (jiffies-per-second))) (newline)
(write (and (memq 'r7rs (features)) #t)) (newline)
