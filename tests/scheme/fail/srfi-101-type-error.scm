(import (scheme base) (scheme rlist))
(rlist-ref (rlist 'a 'b) 5)
