(import (only (scheme base) car cdr frobnicate))
(display "not reached")
