(import (scheme base) (scheme text))
(textual-append "a" 'b)
