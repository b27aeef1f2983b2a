;; Code nested 100,000 levels deep: read, compiled and evaluated.
;; value: 100000
;; within: 20s
{{100000*(+ 1 }}0{{100000*)}}
