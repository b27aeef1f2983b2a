(import (scheme base) (scheme stream))
(stream-car '(1 2 3))
