;; One allocation far over the cap, refused before it is made.
;; error: memory-limit
;; within: 5s
(make-string 1000000000)
