;; The retrieval dev set: nodes as an agent would store them.
;; Each entry: (KEY TYPE (SYMBOL-NAME ...) DESCRIPTION CODE).
;; KEY names the node in queries.scm (it is also its first symbol name).
;; Half the descriptions are Chinese, half English; several topics hold
;; near-duplicates and distractors that share words but not meaning.

;; ---- sorting, and things that only sound like it ----------------------------
(merge-sort "function" ("merge-sort" "msort")
 "归并排序：把列表对半拆开，分别排好后再合并"
 "(define (merge-sort lst less?) (if (or (null? lst) (null? (cdr lst))) lst (let-values (((a b) (split-half lst))) (merge-lists (merge-sort a less?) (merge-sort b less?) less?))))")
(quick-sort "function" ("quick-sort" "qsort")
 "快速排序：选一个基准元素，小的放左边，大的放右边，递归处理"
 "(define (quick-sort lst) (if (null? lst) '() (let ((p (car lst))) (append (quick-sort (filter (lambda (x) (< x p)) (cdr lst))) (list p) (quick-sort (filter (lambda (x) (>= x p)) (cdr lst)))))))")
(bubble-sort "function" ("bubble-sort")
 "冒泡排序：反复交换相邻的逆序元素，直到向量有序"
 "(define (bubble-sort! v) (let loop ((i 0) (swapped #f)) (cond ((< i (- (vector-length v) 1)) (if (> (vector-ref v i) (vector-ref v (+ i 1))) (begin (vector-swap! v i (+ i 1)) (loop (+ i 1) #t)) (loop (+ i 1) swapped))) (swapped (loop 0 #f)) (else v))))")
(insertion-sort "function" ("insertion-sort")
 "Insertion sort: builds the ordered result one element at a time by inserting each item where it belongs"
 "(define (insertion-sort lst) (fold-left (lambda (acc x) (insert-ordered x acc)) '() lst))")
(selection-sort "function" ("selection-sort")
 "Selection sort: repeatedly pick the smallest remaining element and move it to the front"
 "(define (selection-sort lst) (if (null? lst) '() (let ((m (apply min lst))) (cons m (selection-sort (remove-first m lst))))))")
(heap-sort "function" ("heap-sort")
 "Heapsort: arrange the items as a binary max-heap, then pop the largest one repeatedly to get ascending order"
 "(define (heap-sort v) (heapify! v) (do ((end (- (vector-length v) 1) (- end 1))) ((<= end 0) v) (vector-swap! v 0 end) (sift-down! v 0 end)))")
(sort-button-label "constant" ("sort-button-label")
 "排序按钮上显示的文字"
 "(define sort-button-label \"按名称排序\")")
(sort-direction-default "constant" ("default-sort-direction")
 "Default direction for ordering table columns in the user interface"
 "(define default-sort-direction 'ascending)")
(sorted? "function" ("sorted?" "list-sorted?")
 "检查列表是否已经按升序排列"
 "(define (sorted? lst) (or (null? lst) (null? (cdr lst)) (and (<= (car lst) (cadr lst)) (sorted? (cdr lst)))))")
(topological-sort "function" ("topological-sort" "topo-order")
 "拓扑排序：根据依赖关系给任务排出先后执行顺序"
 "(define (topological-sort graph) (let loop ((todo (nodes-without-incoming graph)) (out '())) (if (null? todo) (reverse out) (loop (append (cdr todo) (newly-free graph (car todo))) (cons (car todo) out)))))")
(merge-sorted-lists "function" ("merge-lists")
 "Merge two already ordered lists into one ordered list"
 "(define (merge-lists a b less?) (cond ((null? a) b) ((null? b) a) ((less? (car b) (car a)) (cons (car b) (merge-lists a (cdr b) less?))) (else (cons (car a) (merge-lists (cdr a) b less?)))))")
(shuffle "function" ("shuffle" "fisher-yates")
 "随机打乱向量中元素的顺序（Fisher-Yates 洗牌）"
 "(define (shuffle! v rand) (do ((i (- (vector-length v) 1) (- i 1))) ((< i 1) v) (vector-swap! v i (rand (+ i 1)))))")

;; ---- searching -------------------------------------------------------------
(binary-search "function" ("binary-search" "bsearch")
 "二分查找：在有序向量中折半查找目标值的位置"
 "(define (binary-search v x) (let loop ((lo 0) (hi (- (vector-length v) 1))) (if (> lo hi) #f (let ((mid (quotient (+ lo hi) 2))) (cond ((= (vector-ref v mid) x) mid) ((< (vector-ref v mid) x) (loop (+ mid 1) hi)) (else (loop lo (- mid 1))))))))")
(linear-search "function" ("list-index" "linear-search")
 "Return the position of the first element satisfying a predicate, scanning from the start"
 "(define (list-index pred lst) (let loop ((l lst) (i 0)) (cond ((null? l) #f) ((pred (car l)) i) (else (loop (cdr l) (+ i 1))))))")
(list-max "function" ("list-max" "maximum")
 "找出列表中最大的数"
 "(define (list-max lst) (fold-left max (car lst) (cdr lst)))")
(list-min "function" ("list-min" "minimum")
 "Find the smallest number in a list"
 "(define (list-min lst) (fold-left min (car lst) (cdr lst)))")
(argmax "function" ("argmax")
 "返回使评分函数取最大值的那个元素"
 "(define (argmax f lst) (fold-left (lambda (best x) (if (> (f x) (f best)) x best)) (car lst) (cdr lst)))")
(search-box-placeholder "constant" ("search-placeholder")
 "Placeholder text shown in the empty search box"
 "(define search-placeholder \"Type to search...\")")

;; ---- lists ------------------------------------------------------------------
(flatten "function" ("flatten")
 "把嵌套的列表展开成一层"
 "(define (flatten x) (cond ((null? x) '()) ((pair? x) (append (flatten (car x)) (flatten (cdr x)))) (else (list x))))")
(remove-duplicates "function" ("remove-duplicates" "dedupe" "delete-duplicates")
 "Remove repeated elements from a list, keeping the first occurrence of each"
 "(define (remove-duplicates lst) (let loop ((l lst) (seen '()) (out '())) (cond ((null? l) (reverse out)) ((member (car l) seen) (loop (cdr l) seen out)) (else (loop (cdr l) (cons (car l) seen) (cons (car l) out))))))")
(take "function" ("take" "list-head")
 "取列表的前 n 个元素"
 "(define (take lst n) (if (or (= n 0) (null? lst)) '() (cons (car lst) (take (cdr lst) (- n 1)))))")
(drop "function" ("drop" "list-tail*")
 "Skip the first n elements of a list and return the rest"
 "(define (drop lst n) (if (or (= n 0) (null? lst)) lst (drop (cdr lst) (- n 1))))")
(zip "function" ("zip")
 "将两个列表按位置配对，组成二元组的列表"
 "(define (zip a b) (map cons a b))")
(chunk "function" ("chunk" "list-chunks")
 "Split a list into consecutive groups of a fixed size; the last group may be shorter"
 "(define (chunk lst n) (if (null? lst) '() (cons (take lst (min n (length lst))) (chunk (drop lst n) n))))")
(partition "function" ("partition")
 "按谓词把列表分成满足和不满足的两部分"
 "(define (partition pred lst) (let loop ((l lst) (yes '()) (no '())) (cond ((null? l) (values (reverse yes) (reverse no))) ((pred (car l)) (loop (cdr l) (cons (car l) yes) no)) (else (loop (cdr l) yes (cons (car l) no))))))")
(last-element "function" ("last" "last-element")
 "Return the final element of a non-empty list"
 "(define (last lst) (if (null? (cdr lst)) (car lst) (last (cdr lst))))")
(count-if "function" ("count-if")
 "统计列表中满足条件的元素个数"
 "(define (count-if pred lst) (fold-left (lambda (n x) (if (pred x) (+ n 1) n)) 0 lst))")
(range "function" ("range" "iota*")
 "Produce the integers from start up to but not including end"
 "(define (range start end) (if (>= start end) '() (cons start (range (+ start 1) end))))")
(interleave "function" ("interleave")
 "交替地从两个列表中各取一个元素合成新列表"
 "(define (interleave a b) (cond ((null? a) b) ((null? b) a) (else (cons (car a) (cons (car b) (interleave (cdr a) (cdr b)))))))")
(rotate-list "function" ("rotate-left")
 "Move the first k elements of a list to its end"
 "(define (rotate-left lst k) (let ((k (modulo k (max 1 (length lst))))) (append (drop lst k) (take lst k))))")
(list-reverse "function" ("reverse-list" "my-reverse")
 "反转列表中元素的顺序"
 "(define (reverse-list lst) (fold-left (lambda (acc x) (cons x acc)) '() lst))")
(group-by "function" ("group-by")
 "Collect list elements into buckets keyed by the result of a function"
 "(define (group-by key lst) (fold-right (lambda (x acc) (let* ((k (key x)) (old (assoc k acc))) (if old (begin (set-cdr! old (cons x (cdr old))) acc) (cons (list k x) acc)))) '() lst))")
(frequencies "function" ("frequencies" "tally")
 "统计每个不同元素在列表中出现的次数"
 "(define (frequencies lst) (fold-left (lambda (acc x) (let ((p (assoc x acc))) (if p (begin (set-cdr! p (+ (cdr p) 1)) acc) (cons (cons x 1) acc)))) '() lst))")

;; ---- strings ----------------------------------------------------------------
(string-reverse "function" ("string-reverse")
 "Reverse the characters of a string"
 "(define (string-reverse s) (list->string (reverse (string->list s))))")
(string-split "function" ("string-split" "split-string")
 "按分隔字符把字符串切分成若干子串"
 "(define (string-split s ch) (let loop ((cs (string->list s)) (cur '()) (out '())) (cond ((null? cs) (reverse (cons (list->string (reverse cur)) out))) ((char=? (car cs) ch) (loop (cdr cs) '() (cons (list->string (reverse cur)) out))) (else (loop (cdr cs) (cons (car cs) cur) out)))))")
(string-join "function" ("string-join")
 "Concatenate a list of strings, putting a separator between neighbours"
 "(define (string-join parts sep) (if (null? parts) \"\" (fold-left (lambda (acc p) (string-append acc sep p)) (car parts) (cdr parts))))")
(string-trim "function" ("string-trim" "trim")
 "去掉字符串首尾的空白字符"
 "(define (string-trim s) (let* ((cs (string->list s)) (drop-ws (lambda (l) (if (and (pair? l) (char-whitespace? (car l))) (drop-ws (cdr l)) l)))) (list->string (reverse (drop-ws (reverse (drop-ws cs)))))))")
(string-pad-left "function" ("string-pad-left" "pad-left")
 "Pad a string on the left with a fill character until it reaches a given width"
 "(define (string-pad-left s width ch) (if (>= (string-length s) width) s (string-append (make-string (- width (string-length s)) ch) s)))")
(capitalize "function" ("capitalize" "string-capitalize")
 "把字符串的第一个字母变成大写"
 "(define (capitalize s) (if (string=? s \"\") s (string-append (string (char-upcase (string-ref s 0))) (substring s 1 (string-length s)))))")
(string-contains "function" ("string-contains" "substring-index")
 "Find where a substring first occurs inside a string, or #f"
 "(define (string-contains s sub) (let ((n (string-length s)) (m (string-length sub))) (let loop ((i 0)) (cond ((> (+ i m) n) #f) ((string=? (substring s i (+ i m)) sub) i) (else (loop (+ i 1)))))))")
(string-replace "function" ("string-replace-all")
 "把字符串中所有出现的旧子串替换成新子串"
 "(define (string-replace-all s old new) (let ((i (string-contains s old))) (if i (string-append (substring s 0 i) new (string-replace-all (substring s (+ i (string-length old)) (string-length s)) old new)) s)))")
(palindrome? "function" ("palindrome?")
 "Check whether a word reads the same forwards and backwards"
 "(define (palindrome? s) (let ((cs (string->list (string-downcase s)))) (equal? cs (reverse cs))))")
(anagram? "function" ("anagram?")
 "判断两个单词是否由相同的字母重新排列而成"
 "(define (anagram? a b) (equal? (sort (string->list a) char<?) (sort (string->list b) char<?)))")
(word-count "function" ("word-count")
 "Count how many words a piece of text contains"
 "(define (word-count text) (length (filter (lambda (w) (not (string=? w \"\"))) (string-split text #\\space))))")
(vowel-count "function" ("count-vowels")
 "统计字符串里元音字母的数量"
 "(define (count-vowels s) (count-if (lambda (c) (memv (char-downcase c) '(#\\a #\\e #\\i #\\o #\\u))) (string->list s)))")
(caesar-cipher "function" ("caesar-encrypt" "caesar-shift")
 "Encrypt text by shifting every letter a fixed number of places in the alphabet"
 "(define (caesar-encrypt s k) (list->string (map (lambda (c) (if (char-alphabetic? c) (integer->char (+ 97 (modulo (+ (- (char->integer (char-downcase c)) 97) k) 26))) c)) (string->list s))))")
(levenshtein "function" ("levenshtein" "edit-distance")
 "计算两个字符串之间的编辑距离（插入、删除、替换的最少次数）"
 "(define (levenshtein a b) (let* ((n (string-length b)) (row (list->vector (iota (+ n 1))))) (string-for-each (lambda (ca) (let loop ((j 1) (prev (vector-ref row 0))) (vector-set! row 0 (+ prev 1)) '())) a) (vector-ref row n)))")
(string-repeat "function" ("string-repeat")
 "Build a string by repeating another string n times"
 "(define (string-repeat s n) (if (= n 0) \"\" (string-append s (string-repeat s (- n 1)))))")
(slugify "function" ("slugify")
 "把标题转换成适合放在网址里的小写短横线形式"
 "(define (slugify title) (string-join (string-split (string-downcase (string-trim title)) #\\space) \"-\"))")
(char-frequency "function" ("char-histogram")
 "Count how often each character occurs in a string"
 "(define (char-histogram s) (frequencies (string->list s)))")
(string-starts-with? "function" ("string-prefix?*" "starts-with?")
 "判断字符串是否以给定的前缀开头"
 "(define (starts-with? s prefix) (and (<= (string-length prefix) (string-length s)) (string=? (substring s 0 (string-length prefix)) prefix)))")

;; ---- numbers ----------------------------------------------------------------
(factorial "function" ("factorial" "fact")
 "计算阶乘的递归函数"
 "(define (factorial n) (if (= n 0) 1 (* n (factorial (- n 1)))))")
(factorial-iter "function" ("factorial-iter")
 "Factorial computed with a loop and an accumulator, so deep inputs do not grow the stack"
 "(define (factorial-iter n) (do ((i 1 (+ i 1)) (acc 1 (* acc i))) ((> i n) acc)))")
(fibonacci "function" ("fibonacci" "fib")
 "Return the n-th Fibonacci number using the naive double recursion"
 "(define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))")
(fib-memo "function" ("fib-memo")
 "带缓存的斐波那契数列计算，避免重复求值"
 "(define fib-memo (let ((table (make-equal-hash-table))) (lambda (n) (or (hash-table-ref/default table n #f) (let ((v (if (< n 2) n (+ (fib-memo (- n 1)) (fib-memo (- n 2)))))) (hash-table-set! table n v) v)))))")
(gcd* "function" ("greatest-common-divisor" "my-gcd")
 "用辗转相除法求两个整数的最大公约数"
 "(define (my-gcd a b) (if (= b 0) (abs a) (my-gcd b (remainder a b))))")
(lcm* "function" ("least-common-multiple" "my-lcm")
 "Smallest positive number that both integers divide evenly"
 "(define (my-lcm a b) (quotient (abs (* a b)) (my-gcd a b)))")
(prime? "function" ("prime?" "is-prime")
 "Test whether an integer is prime by trial division up to its square root"
 "(define (prime? n) (and (> n 1) (let loop ((d 2)) (cond ((> (* d d) n) #t) ((= 0 (remainder n d)) #f) (else (loop (+ d 1)))))))")
(sieve "function" ("primes-up-to" "sieve-of-eratosthenes")
 "埃拉托斯特尼筛法：列出不超过 n 的所有质数"
 "(define (primes-up-to n) (let ((marks (make-vector (+ n 1) #t))) (do ((i 2 (+ i 1)) (out '() (if (vector-ref marks i) (begin (do ((j (* i i) (+ j i))) ((> j n)) (vector-set! marks j #f)) (cons i out)) out))) ((> i n) (reverse out)))))")
(expmod "function" ("expmod" "modular-power")
 "Raise a base to a power modulo m by repeated squaring"
 "(define (expmod base e m) (cond ((= e 0) 1) ((even? e) (remainder (square (expmod base (/ e 2) m)) m)) (else (remainder (* base (expmod base (- e 1) m)) m))))")
(sqrt-newton "function" ("sqrt-newton")
 "用牛顿迭代法近似计算平方根"
 "(define (sqrt-newton x) (let loop ((g 1.0)) (if (< (abs (- (* g g) x)) 1e-10) g (loop (/ (+ g (/ x g)) 2)))))")
(mean "function" ("mean" "average")
 "Arithmetic mean of a list of numbers"
 "(define (mean xs) (/ (apply + xs) (length xs)))")
(median "function" ("median")
 "求一组数的中位数"
 "(define (median xs) (let* ((v (list->vector (sort xs <))) (n (vector-length v))) (if (odd? n) (vector-ref v (quotient n 2)) (/ (+ (vector-ref v (- (quotient n 2) 1)) (vector-ref v (quotient n 2))) 2))))")
(std-dev "function" ("standard-deviation" "stddev")
 "Standard deviation: how spread out the numbers are around their average"
 "(define (standard-deviation xs) (let ((m (mean xs))) (sqrt (mean (map (lambda (x) (square (- x m))) xs)))))")
(clamp "function" ("clamp")
 "把数值限制在给定的上下界之间"
 "(define (clamp x lo hi) (max lo (min hi x)))")
(round-to "function" ("round-to")
 "Round a number to a given count of decimal places"
 "(define (round-to x places) (let ((k (expt 10 places))) (/ (round (* x k)) k)))")
(digits "function" ("digits" "number->digits")
 "把整数拆成各位数字组成的列表"
 "(define (digits n) (map (lambda (c) (- (char->integer c) 48)) (string->list (number->string n))))")
(sum-digits "function" ("digit-sum")
 "Add up the decimal digits of a non-negative integer"
 "(define (digit-sum n) (if (< n 10) n (+ (remainder n 10) (digit-sum (quotient n 10)))))")
(collatz "function" ("collatz-steps")
 "计算考拉兹猜想序列到达 1 所需的步数"
 "(define (collatz-steps n) (let loop ((n n) (k 0)) (cond ((= n 1) k) ((even? n) (loop (/ n 2) (+ k 1))) (else (loop (+ (* 3 n) 1) (+ k 1))))))")
(perfect-number? "function" ("perfect?")
 "Whether a number equals the sum of its proper divisors"
 "(define (perfect? n) (= n (apply + (filter (lambda (d) (= 0 (remainder n d))) (range 1 n)))))")
(binomial "function" ("choose" "binomial")
 "组合数：从 n 个元素中选出 k 个的方法数"
 "(define (choose n k) (if (or (= k 0) (= k n)) 1 (+ (choose (- n 1) (- k 1)) (choose (- n 1) k))))")
(pi-constant "constant" ("pi")
 "The ratio of a circle's circumference to its diameter"
 "(define pi 3.141592653589793)")
(golden-ratio "constant" ("golden-ratio" "phi")
 "黄金分割比，约等于 1.618"
 "(define golden-ratio (/ (+ 1 (sqrt 5)) 2))")
(even-odd "function" ("parity")
 "Tell whether an integer is even or odd, as a symbol"
 "(define (parity n) (if (even? n) 'even 'odd))")
(int->roman "function" ("integer->roman" "roman-numeral")
 "把整数转换成罗马数字字符串"
 "(define (integer->roman n) (let loop ((n n) (table '((1000 . \"M\") (900 . \"CM\") (500 . \"D\") (400 . \"CD\") (100 . \"C\") (90 . \"XC\") (50 . \"L\") (40 . \"XL\") (10 . \"X\") (9 . \"IX\") (5 . \"V\") (4 . \"IV\") (1 . \"I\")))) (cond ((= n 0) \"\") ((>= n (caar table)) (string-append (cdar table) (loop (- n (caar table)) table))) (else (loop n (cdr table))))))")
(number->binary "function" ("number->binary-string")
 "Write a non-negative integer in base two"
 "(define (number->binary-string n) (number->string n 2))")

;; ---- trees and graphs -----------------------------------------------------------
(bst-insert "function" ("bst-insert" "tree-insert")
 "向二叉搜索树中插入一个键，保持左小右大"
 "(define (bst-insert tree k) (cond ((null? tree) (list k '() '())) ((< k (car tree)) (list (car tree) (bst-insert (cadr tree) k) (caddr tree))) (else (list (car tree) (cadr tree) (bst-insert (caddr tree) k)))))")
(bst-lookup "function" ("bst-contains?" "tree-member?")
 "Check whether a key is present in a binary search tree by walking left or right"
 "(define (bst-contains? tree k) (cond ((null? tree) #f) ((= k (car tree)) #t) ((< k (car tree)) (bst-contains? (cadr tree) k)) (else (bst-contains? (caddr tree) k))))")
(inorder "function" ("inorder-traversal" "tree->list")
 "中序遍历二叉树，返回节点值的列表"
 "(define (inorder-traversal tree) (if (null? tree) '() (append (inorder-traversal (cadr tree)) (list (car tree)) (inorder-traversal (caddr tree)))))")
(tree-height "function" ("tree-height" "tree-depth")
 "Number of levels from the root of a binary tree down to its deepest leaf"
 "(define (tree-height tree) (if (null? tree) 0 (+ 1 (max (tree-height (cadr tree)) (tree-height (caddr tree))))))")
(tree-map "function" ("tree-map")
 "对树中每个叶子应用函数，保持树的形状不变"
 "(define (tree-map f t) (cond ((null? t) '()) ((pair? t) (cons (tree-map f (car t)) (tree-map f (cdr t)))) (else (f t))))")
(count-leaves "function" ("count-leaves")
 "Count the leaves of a nested list structure"
 "(define (count-leaves t) (cond ((null? t) 0) ((not (pair? t)) 1) (else (+ (count-leaves (car t)) (count-leaves (cdr t))))))")
(bfs-shortest-path "function" ("bfs-path" "shortest-path")
 "用广度优先搜索求无权图中两个顶点之间的最短路径"
 "(define (bfs-path graph from to) (let loop ((queue (list (list from))) (seen (list from))) (cond ((null? queue) #f) ((eq? (caar queue) to) (reverse (car queue))) (else (let* ((path (car queue)) (next (filter (lambda (n) (not (memq n seen))) (neighbours graph (car path))))) (loop (append (cdr queue) (map (lambda (n) (cons n path)) next)) (append next seen)))))))")
(dfs "function" ("depth-first-search" "dfs")
 "Visit every vertex reachable from a start vertex, going as deep as possible before backtracking"
 "(define (dfs graph start) (let visit ((v start) (seen '())) (if (memq v seen) seen (fold-left (lambda (s n) (visit n s)) (cons v seen) (neighbours graph v)))))")
(dijkstra "function" ("dijkstra")
 "Dijkstra 算法：求带非负权重的图中从起点到各点的最短距离"
 "(define (dijkstra graph source) (let loop ((dist (list (cons source 0))) (done '())) (let ((u (closest-unfinished dist done))) (if (not u) dist (loop (relax-edges graph u dist) (cons u done))))))")
(has-cycle? "function" ("has-cycle?" "cyclic?")
 "Detect whether a directed graph contains a cycle"
 "(define (has-cycle? graph) (any (lambda (v) (reaches? graph v v)) (vertices graph)))")
(adjacency-list "function" ("edges->adjacency")
 "把边的列表转换成邻接表表示"
 "(define (edges->adjacency edges) (fold-left (lambda (acc e) (alist-update (car e) (cons (cdr e) (alist-ref (car e) acc '())) acc)) '() edges))")
(connected-components "function" ("connected-components")
 "Split an undirected graph into groups of vertices that can reach one another"
 "(define (connected-components graph) (let loop ((vs (vertices graph)) (out '())) (if (null? vs) out (let ((c (dfs graph (car vs)))) (loop (filter (lambda (v) (not (memq v c))) vs) (cons c out))))))")

;; ---- stacks, queues, tables -------------------------------------------------
(make-queue "function" ("make-queue" "enqueue!" "dequeue!")
 "先进先出的队列：入队放到尾部，出队从头部取"
 "(define (make-queue) (cons '() '())) (define (enqueue! q x) (let ((cell (list x))) (if (null? (car q)) (set-car! q cell) (set-cdr! (cdr q) cell)) (set-cdr! q cell)))")
(stack "function" ("stack-push" "stack-pop")
 "A last-in first-out stack kept in a list"
 "(define (stack-push s x) (cons x s)) (define (stack-pop s) (values (car s) (cdr s)))")
(priority-queue-insert "function" ("heap-insert" "pq-insert")
 "向最小堆中插入元素并上浮到正确位置，用作优先队列"
 "(define (heap-insert! h x) (vector-grow-push! h x) (sift-up! h (- (heap-size h) 1)))")
(ring-buffer "function" ("make-ring-buffer")
 "A fixed-capacity circular buffer that overwrites its oldest entry when full"
 "(define (make-ring-buffer n) (let ((v (make-vector n #f)) (i 0)) (lambda (x) (vector-set! v i x) (set! i (modulo (+ i 1) n)))))")
(alist-update "function" ("alist-update")
 "在关联列表中设置某个键的值，已有则替换"
 "(define (alist-update key val alist) (cons (cons key val) (filter (lambda (p) (not (equal? (car p) key))) alist)))")
(alist-ref "function" ("alist-ref")
 "Look up the value stored under a key in an association list, with a default"
 "(define (alist-ref key alist default) (let ((p (assoc key alist))) (if p (cdr p) default)))")
(word-frequency "function" ("word-frequencies")
 "Count how many times each word occurs in a text using a hash table"
 "(define (word-frequencies text) (let ((t (make-equal-hash-table))) (for-each (lambda (w) (hash-table-update!/default t w (lambda (n) (+ n 1)) 0)) (string-split text #\\space)) t))")
(lru-cache "function" ("make-lru-cache")
 "容量有限的缓存，满了就淘汰最久没有使用的条目"
 "(define (make-lru-cache capacity) (let ((entries '())) (lambda (key compute) (let ((hit (assoc key entries))) (set! entries (take (cons (or hit (cons key (compute key))) (remove-key key entries)) capacity)) (cdr (car entries))))))")
(memoize "function" ("memoize")
 "Wrap a one-argument function so repeated calls with the same argument reuse the stored result"
 "(define (memoize f) (let ((seen '())) (lambda (x) (let ((p (assoc x seen))) (if p (cdr p) (let ((v (f x))) (set! seen (cons (cons x v) seen)) v))))))")
(set-union "function" ("set-union" "list-union")
 "求两个集合（用列表表示）的并集"
 "(define (set-union a b) (append a (filter (lambda (x) (not (member x a))) b)))")
(set-intersection "function" ("set-intersection")
 "Elements that two lists have in common"
 "(define (set-intersection a b) (filter (lambda (x) (member x b)) a))")

;; ---- higher-order -----------------------------------------------------------
(compose "function" ("compose")
 "函数组合：返回先应用 g 再应用 f 的新函数"
 "(define (compose f g) (lambda args (f (apply g args))))")
(curry "function" ("curry")
 "Fix the first argument of a two-argument procedure, returning a procedure of the second"
 "(define (curry f x) (lambda (y) (f x y)))")
(fold-left* "function" ("my-fold-left" "reduce-left")
 "从左到右用二元函数把列表累积成一个值"
 "(define (my-fold-left f init lst) (if (null? lst) init (my-fold-left f (f init (car lst)) (cdr lst))))")
(repeat "function" ("repeat-times")
 "Call a thunk a given number of times"
 "(define (repeat-times n thunk) (when (> n 0) (thunk) (repeat-times (- n 1) thunk)))")
(my-filter "function" ("keep" "my-filter")
 "保留列表中使谓词为真的元素"
 "(define (keep pred lst) (cond ((null? lst) '()) ((pred (car lst)) (cons (car lst) (keep pred (cdr lst)))) (else (keep pred (cdr lst)))))")
(flat-map "function" ("flat-map" "append-map*")
 "Apply a function that returns lists to each element and concatenate the results"
 "(define (flat-map f lst) (apply append (map f lst)))")
(pipeline "function" ("pipe" "thread-first")
 "把一个值依次传过一串函数"
 "(define (pipe x . fs) (fold-left (lambda (acc f) (f acc)) x fs))")
(identity "function" ("identity")
 "Return the argument unchanged"
 "(define (identity x) x)")

;; ---- dates and time ---------------------------------------------------------
(leap-year? "function" ("leap-year?")
 "判断某一年是不是闰年"
 "(define (leap-year? y) (and (= 0 (remainder y 4)) (or (not (= 0 (remainder y 100))) (= 0 (remainder y 400)))))")
(days-in-month "function" ("days-in-month")
 "How many days a given month has in a given year"
 "(define (days-in-month y m) (case m ((1 3 5 7 8 10 12) 31) ((4 6 9 11) 30) (else (if (leap-year? y) 29 28))))")
(day-of-week "function" ("day-of-week" "weekday")
 "根据年月日算出是星期几（蔡勒公式）"
 "(define (weekday y m d) (let* ((m2 (if (< m 3) (+ m 12) m)) (y2 (if (< m 3) (- y 1) y))) (modulo (+ d (quotient (* 13 (+ m2 1)) 5) y2 (quotient y2 4) (- (quotient y2 100)) (quotient y2 400)) 7)))")
(format-date "function" ("format-date" "date->iso-string")
 "Format a year, month and day as an ISO 8601 date such as 2025-07-29"
 "(define (format-date y m d) (string-append (number->string y) \"-\" (string-pad-left (number->string m) 2 #\\0) \"-\" (string-pad-left (number->string d) 2 #\\0)))")
(parse-timestamp "function" ("parse-iso-timestamp")
 "解析 ISO 8601 格式的时间戳字符串，得到年月日时分秒"
 "(define (parse-iso-timestamp s) (map string->number (list (substring s 0 4) (substring s 5 7) (substring s 8 10) (substring s 11 13) (substring s 14 16) (substring s 17 19))))")
(seconds->hms "function" ("seconds->hms" "format-duration")
 "Turn a count of seconds into hours, minutes and seconds like 1:02:03"
 "(define (seconds->hms s) (string-append (number->string (quotient s 3600)) \":\" (string-pad-left (number->string (quotient (remainder s 3600) 60)) 2 #\\0) \":\" (string-pad-left (number->string (remainder s 60)) 2 #\\0)))")
(age-from-birthday "function" ("age-in-years")
 "根据出生日期和今天的日期计算周岁年龄"
 "(define (age-in-years born today) (- (car today) (car born) (if (< (cadr today) (cadr born)) 1 0)))")
(timeout-default "constant" ("default-timeout-ms")
 "How long a network call may wait before it is abandoned, in milliseconds"
 "(define default-timeout-ms 30000)")

;; ---- text formats and validation ----------------------------------------------
(parse-csv-line "function" ("parse-csv-line" "csv-split")
 "Split one line of comma-separated values into its fields"
 "(define (parse-csv-line line) (string-split line #\\,))")
(json-escape "function" ("json-escape-string")
 "对字符串中的引号和反斜杠转义，以便放进 JSON"
 "(define (json-escape-string s) (apply string-append (map (lambda (c) (case c ((#\\\") \"\\\\\\\"\") ((#\\\\) \"\\\\\\\\\") (else (string c)))) (string->list s))))")
(valid-email? "function" ("valid-email?" "email?")
 "Check that an address looks like name@domain.tld"
 "(define (valid-email? s) (let ((at (string-contains s \"@\"))) (and at (> at 0) (string-contains (substring s at (string-length s)) \".\") #t)))")
(phone-number? "function" ("valid-phone?")
 "检查字符串是不是 11 位的手机号码"
 "(define (valid-phone? s) (and (= (string-length s) 11) (char=? (string-ref s 0) #\\1) (every char-numeric? (string->list s))))")
(password-strength "function" ("password-strength")
 "Rate a password as weak, medium or strong from its length and the kinds of characters it mixes"
 "(define (password-strength p) (let ((kinds (count-if (lambda (test) (any test (string->list p))) (list char-upper-case? char-lower-case? char-numeric?)))) (cond ((and (>= (string-length p) 12) (= kinds 3)) 'strong) ((>= (string-length p) 8) 'medium) (else 'weak))))")
(format-currency "function" ("format-money")
 "把金额格式化为保留两位小数、带货币符号的字符串"
 "(define (format-money amount) (string-append \"¥\" (number->string (/ (round (* amount 100)) 100.))))")
(html-escape "function" ("html-escape")
 "Replace <, > and & so that text can be placed inside an HTML page"
 "(define (html-escape s) (apply string-append (map (lambda (c) (case c ((#\\<) \"&lt;\") ((#\\>) \"&gt;\") ((#\\&) \"&amp;\") (else (string c)))) (string->list s))))")
(url-encode "function" ("url-encode" "percent-encode")
 "对网址中的特殊字符做百分号编码"
 "(define (url-encode s) (apply string-append (map (lambda (c) (if (or (char-alphabetic? c) (char-numeric? c)) (string c) (string-append \"%\" (number->string (char->integer c) 16)))) (string->list s))))")
(parse-int "function" ("parse-int" "string->integer")
 "Read a decimal integer from a string, or #f when it is not one"
 "(define (parse-int s) (let ((n (string->number s))) (and n (exact-integer? n) n)))")
(print-table "function" ("print-table")
 "把行列表按列对齐打印成文本表格"
 "(define (print-table rows) (for-each (lambda (row) (for-each (lambda (cell) (display (string-pad-left cell 10 #\\space))) row) (newline)) rows))")

;; ---- units, money, everyday formulas ----------------------------------------
(celsius->fahrenheit "function" ("celsius->fahrenheit" "c->f")
 "Convert a temperature from degrees Celsius to Fahrenheit"
 "(define (celsius->fahrenheit c) (+ 32 (* 9/5 c)))")
(fahrenheit->celsius "function" ("fahrenheit->celsius")
 "把华氏温度换算成摄氏温度"
 "(define (fahrenheit->celsius f) (* 5/9 (- f 32)))")
(km->miles "function" ("km->miles")
 "Convert a distance in kilometres to miles"
 "(define (km->miles km) (* km 0.621371))")
(bmi "function" ("body-mass-index" "bmi")
 "根据身高和体重计算身体质量指数"
 "(define (bmi weight-kg height-m) (/ weight-kg (* height-m height-m)))")
(compound-interest "function" ("compound-interest")
 "Grow a principal at a yearly rate compounded a number of times per year"
 "(define (compound-interest principal rate years times) (* principal (expt (+ 1 (/ rate times)) (* years times))))")
(discount-price "function" ("apply-discount")
 "按折扣率计算打折后的价格"
 "(define (apply-discount price rate) (* price (- 1 rate)))")
(sales-tax "function" ("add-sales-tax")
 "Add sales tax at a given rate to a net amount"
 "(define (add-sales-tax net rate) (* net (+ 1 rate)))")
(loan-payment "function" ("monthly-payment")
 "等额本息贷款每月应还的金额"
 "(define (monthly-payment principal annual-rate months) (let ((r (/ annual-rate 12))) (/ (* principal r) (- 1 (expt (+ 1 r) (- months))))))")
(circle-area "function" ("circle-area")
 "Area enclosed by a circle of a given radius"
 "(define (circle-area r) (* pi r r))")
(distance-2d "function" ("euclidean-distance" "point-distance")
 "平面上两点之间的直线距离"
 "(define (euclidean-distance p q) (sqrt (+ (square (- (car p) (car q))) (square (- (cdr p) (cdr q))))))")
(tip-calculator "function" ("tip-amount")
 "How much to leave as a gratuity on a restaurant bill"
 "(define (tip-amount bill percent) (round-to (* bill (/ percent 100)) 2))")
(split-bill "function" ("split-bill")
 "把账单总额平均分摊给几个人"
 "(define (split-bill total people) (round-to (/ total people) 2))")

;; ---- vectors and matrices ----------------------------------------------------
(dot-product "function" ("dot-product" "inner-product")
 "向量的点积：对应分量相乘再求和"
 "(define (dot-product a b) (apply + (map * a b)))")
(matrix-multiply "function" ("matrix-multiply" "mat*")
 "Multiply two matrices given as lists of rows"
 "(define (matrix-multiply a b) (let ((cols (transpose b))) (map (lambda (row) (map (lambda (col) (dot-product row col)) cols)) a)))")
(transpose "function" ("transpose")
 "矩阵转置：行变成列"
 "(define (transpose m) (if (null? (car m)) '() (cons (map car m) (transpose (map cdr m)))))")
(identity-matrix "function" ("identity-matrix")
 "The n by n matrix with ones on the diagonal and zeros elsewhere"
 "(define (identity-matrix n) (map (lambda (i) (map (lambda (j) (if (= i j) 1 0)) (range 0 n))) (range 0 n)))")
(vector-sum "function" ("vector-sum")
 "求向量中所有元素的和"
 "(define (vector-sum v) (let loop ((i 0) (s 0)) (if (= i (vector-length v)) s (loop (+ i 1) (+ s (vector-ref v i))))))")
(vector-swap "function" ("vector-swap!")
 "Exchange the elements at two positions of a vector in place"
 "(define (vector-swap! v i j) (let ((t (vector-ref v i))) (vector-set! v i (vector-ref v j)) (vector-set! v j t)))")
(normalize-vector "function" ("normalize" "unit-vector")
 "把向量缩放成长度为 1 的单位向量"
 "(define (normalize v) (let ((len (sqrt (dot-product v v)))) (map (lambda (x) (/ x len)) v)))")
(cosine-similarity "function" ("cosine-similarity")
 "How alike two vectors are in direction, from -1 to 1"
 "(define (cosine-similarity a b) (/ (dot-product a b) (* (sqrt (dot-product a a)) (sqrt (dot-product b b)))))")

;; ---- randomness -------------------------------------------------------------
(random-choice "function" ("random-choice" "pick-random")
 "Pick one element of a list at random"
 "(define (random-choice lst rand) (list-ref lst (rand (length lst))))")
(dice-roll "function" ("roll-dice")
 "模拟掷骰子，返回 1 到 6 的随机点数"
 "(define (roll-dice rand) (+ 1 (rand 6)))")
(lcg "function" ("make-lcg" "linear-congruential")
 "A tiny pseudo-random number generator: each state is a*state+c modulo m"
 "(define (make-lcg seed) (let ((s seed)) (lambda () (set! s (modulo (+ (* 1103515245 s) 12345) 2147483648)) s)))")
(sample-without-replacement "function" ("sample")
 "从列表中随机抽取 k 个不重复的元素"
 "(define (sample lst k rand) (take (vector->list (shuffle! (list->vector lst) rand)) k))")

;; ---- agents, services, operations ---------------------------------------------
(retry-with-backoff "function" ("retry-with-backoff" "retry")
 "Call an action again after a failure, waiting twice as long each time, up to a limit of attempts"
 "(define (retry-with-backoff thunk attempts delay sleep) (let loop ((n 1) (d delay)) (guard (e ((< n attempts) (sleep d) (loop (+ n 1) (* d 2)))) (thunk))))")
(max-retries "constant" ("max-retries")
 "失败后最多重新尝试的次数"
 "(define max-retries 5)")
(rate-limiter "function" ("make-rate-limiter" "token-bucket")
 "令牌桶限流器：每秒补充固定数量的令牌，没有令牌就拒绝请求"
 "(define (make-rate-limiter rate burst now) (let ((tokens burst) (last (now))) (lambda () (let ((t (now))) (set! tokens (min burst (+ tokens (* rate (- t last))))) (set! last t) (if (>= tokens 1) (begin (set! tokens (- tokens 1)) #t) #f)))))")
(cache-with-expiry "function" ("make-ttl-cache")
 "Remember computed values for a limited time, after which they are computed again"
 "(define (make-ttl-cache ttl now) (let ((table '())) (lambda (key compute) (let ((hit (assoc key table))) (if (and hit (< (- (now) (cadr hit)) ttl)) (cddr hit) (let ((v (compute))) (set! table (cons (cons key (cons (now) v)) table)) v))))))")
(log-message "function" ("log-info" "log-line")
 "把带时间戳和级别的日志消息写到输出端口"
 "(define (log-info port ts msg) (display (string-append \"[\" ts \"] INFO \" msg) port) (newline port))")
(build-url "function" ("build-url" "url-with-query")
 "Join a base address and key/value parameters into a full link with a query string"
 "(define (build-url base params) (string-append base \"?\" (string-join (map (lambda (p) (string-append (car p) \"=\" (url-encode (cdr p)))) params) \"&\")))")
(parse-query-string "function" ("parse-query-string")
 "把网址里问号后面的参数解析成关联列表"
 "(define (parse-query-string qs) (map (lambda (kv) (let ((p (string-split kv #\\=))) (cons (car p) (cadr p)))) (string-split qs #\\&)))")
(greeting "constant" ("greeting-message" "welcome-text")
 "Welcome text shown to a user when a session starts"
 "(define greeting-message \"Hello! How can I help you today?\")")
(error-not-found "constant" ("not-found-message")
 "找不到资源时返回给用户的错误提示"
 "(define not-found-message \"您要找的内容不存在\")")
(http-status-text "function" ("http-status-text")
 "The standard reason phrase for an HTTP status code such as 404"
 "(define (http-status-text code) (case code ((200) \"OK\") ((301) \"Moved Permanently\") ((404) \"Not Found\") ((500) \"Internal Server Error\") (else \"Unknown\")))")
(session-id "function" ("new-session-id")
 "生成一个新的随机会话标识符"
 "(define (new-session-id rand) (string-append \"s-\" (number->string (rand 1000000000) 16)))")
(conversation-summary "function" ("summarize-turns")
 "Keep only the last few turns of a conversation so that it fits the model's context"
 "(define (summarize-turns turns keep) (let ((n (length turns))) (if (<= n keep) turns (drop turns (- n keep)))))")
(tool-call "function" ("call-tool" "invoke-tool")
 "按名称调用已注册的工具，并把参数传给它"
 "(define (call-tool registry name args) (let ((t (alist-ref name registry #f))) (if t (apply t args) (error \"no such tool\" name))))")
(plan-steps "function" ("run-plan")
 "Run the steps of a plan in order, stopping at the first one that fails"
 "(define (run-plan steps) (let loop ((s steps) (done '())) (cond ((null? s) (reverse done)) (((car s)) (loop (cdr s) (cons (car s) done))) (else (reverse done)))))")
(token-count "function" ("estimate-tokens")
 "粗略估算一段文本会占用多少个模型词元"
 "(define (estimate-tokens text) (ceiling (/ (string-length text) 4)))")
(config-path "constant" ("config-file-path")
 "Where the program reads its settings from"
 "(define config-file-path \"~/.config/app/settings.scm\")")
(read-config "function" ("read-config" "load-settings")
 "读取配置文件并返回其中的设置项"
 "(define (read-config port) (let loop ((x (read port)) (out '())) (if (eof-object? x) (reverse out) (loop (read port) (cons x out)))))")
(checksum "function" ("adler32" "checksum")
 "Compute a quick checksum of a bytevector to detect accidental corruption"
 "(define (adler32 bv) (let loop ((i 0) (a 1) (b 0)) (if (= i (bytevector-length bv)) (+ (* b 65536) a) (let ((a2 (modulo (+ a (bytevector-u8-ref bv i)) 65521))) (loop (+ i 1) a2 (modulo (+ b a2) 65521))))))")
(uuid-like "function" ("random-hex-id")
 "生成指定长度的随机十六进制字符串"
 "(define (random-hex-id n rand) (list->string (map (lambda (i) (string-ref \"0123456789abcdef\" (rand 16))) (range 0 n))))")
(debounce "function" ("debounce")
 "Wrap a handler so that a burst of calls runs it only once, after things go quiet"
 "(define (debounce f wait schedule cancel) (let ((pending #f)) (lambda args (when pending (cancel pending)) (set! pending (schedule wait (lambda () (apply f args)))))))")
(color-palette "constant" ("theme-colors")
 "界面主题使用的颜色列表"
 "(define theme-colors '(\"#1f77b4\" \"#ff7f0e\" \"#2ca02c\"))")
(version-string "constant" ("app-version")
 "The release number of the application"
 "(define app-version \"2.3.1\")")
(user-record "record" ("make-user" "user-name" "user-email")
 "用户记录：包含姓名和电子邮件地址"
 "(define-record-type user (make-user name email) user? (name user-name) (email user-email))")
(point-record "record" ("make-point" "point-x" "point-y")
 "A two-dimensional point with x and y coordinates"
 "(define-record-type point (make-point x y) point? (x point-x) (y point-y))")
(matrix-determinant "function" ("determinant-2x2")
 "求二阶矩阵的行列式"
 "(define (determinant-2x2 m) (- (* (caar m) (cadadr m)) (* (cadar m) (caadr m))))")
(power-set "function" ("power-set" "subsets")
 "All subsets of a list, including the empty one"
 "(define (power-set s) (if (null? s) '(()) (let ((rest (power-set (cdr s)))) (append rest (map (lambda (x) (cons (car s) x)) rest)))))")
(permutations "function" ("permutations")
 "列出一个列表所有可能的排列"
 "(define (permutations s) (if (null? s) '(()) (append-map (lambda (x) (map (lambda (p) (cons x p)) (permutations (delete x s)))) s)))")
(hanoi "function" ("hanoi" "towers-of-hanoi")
 "Print the moves that carry a tower of disks from one peg to another, never putting a larger disk on a smaller"
 "(define (hanoi n from to via) (when (> n 0) (hanoi (- n 1) from via to) (display (list from '-> to)) (newline) (hanoi (- n 1) via to from)))")
(n-queens "function" ("n-queens" "queens")
 "八皇后问题：在棋盘上放置皇后使它们互不攻击"
 "(define (queens n) (let place ((k 0) (cols '())) (if (= k n) 1 (apply + (map (lambda (c) (if (safe? c cols) (place (+ k 1) (cons c cols)) 0)) (range 0 n))))))")
(balanced-parens? "function" ("balanced?")
 "Check that every opening bracket in a string is closed in the right order"
 "(define (balanced? s) (let loop ((cs (string->list s)) (stack '())) (cond ((null? cs) (null? stack)) ((memv (car cs) '(#\\( #\\[)) (loop (cdr cs) (cons (car cs) stack))) ((memv (car cs) '(#\\) #\\])) (and (pair? stack) (loop (cdr cs) (cdr stack)))) (else (loop (cdr cs) stack)))))")
(run-length-encode "function" ("run-length-encode" "rle")
 "游程编码：把连续重复的字符压缩成“字符+次数”"
 "(define (run-length-encode lst) (if (null? lst) '() (let loop ((x (car lst)) (n 1) (rest (cdr lst))) (cond ((null? rest) (list (cons x n))) ((equal? (car rest) x) (loop x (+ n 1) (cdr rest))) (else (cons (cons x n) (loop (car rest) 1 (cdr rest))))))))")
(base64-alphabet "constant" ("base64-alphabet")
 "The 64 characters used by Base64 encoding"
 "(define base64-alphabet \"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/\")")
(matrix-print "function" ("display-matrix")
 "逐行打印矩阵"
 "(define (display-matrix m) (for-each (lambda (row) (display row) (newline)) m))")
(list-sum "function" ("sum" "list-sum")
 "Add up all the numbers in a list"
 "(define (sum lst) (apply + lst))")
(list-product "function" ("product")
 "计算列表中所有数的乘积"
 "(define (product lst) (apply * lst))")
(string->list-of-words "function" ("words")
 "Break text into its words, dropping empty pieces"
 "(define (words text) (filter (lambda (w) (> (string-length w) 0)) (string-split text #\\space)))")
(title-case "function" ("title-case")
 "把句子中每个单词的首字母都变成大写"
 "(define (title-case s) (string-join (map capitalize (words s)) \" \"))")
(is-empty-string "function" ("blank?")
 "True when a string is empty or holds only spaces"
 "(define (blank? s) (string=? (string-trim s) \"\"))")
(temperature-threshold "constant" ("fever-threshold")
 "体温超过这个值就算发烧（摄氏度）"
 "(define fever-threshold 37.3)")
(tax-brackets "constant" ("tax-brackets")
 "Income limits and rates of each band of the progressive income tax"
 "(define tax-brackets '((10000 . 0.1) (40000 . 0.2) (+inf.0 . 0.3)))")
(income-tax "function" ("income-tax")
 "按累进税率计算个人所得税"
 "(define (income-tax income) (let loop ((bs tax-brackets) (lower 0) (tax 0)) (if (or (null? bs) (<= income lower)) tax (let ((upper (caar bs))) (loop (cdr bs) upper (+ tax (* (cdar bs) (- (min income upper) lower))))))))")
(queue-empty? "function" ("queue-empty?")
 "Whether a first-in first-out queue holds no items"
 "(define (queue-empty? q) (null? (car q)))")
(histogram-print "function" ("print-histogram")
 "用星号打印每个类别的数量，形成横向条形图"
 "(define (print-histogram counts) (for-each (lambda (p) (display (car p)) (display \" \") (display (make-string (cdr p) #\\*)) (newline)) counts))")
(string-count "function" ("string-count-char")
 "How many times a given character occurs in a string"
 "(define (string-count-char s ch) (count-if (lambda (c) (char=? c ch)) (string->list s)))")
(assoc-keys "function" ("alist-keys")
 "取出关联列表中的所有键"
 "(define (alist-keys alist) (map car alist))")
(deep-copy "function" ("deep-copy")
 "Copy a nested structure of pairs and vectors so that changing the copy leaves the original alone"
 "(define (deep-copy x) (cond ((pair? x) (cons (deep-copy (car x)) (deep-copy (cdr x)))) ((vector? x) (vector-map deep-copy x)) (else x)))")
(equal-ignore-case "function" ("string-ci-equal?")
 "忽略大小写比较两个字符串是否相同"
 "(define (string-ci-equal? a b) (string=? (string-downcase a) (string-downcase b)))")
(nth-prime "function" ("nth-prime")
 "The n-th prime number, counting 2 as the first"
 "(define (nth-prime n) (let loop ((k 2) (found 0)) (if (prime? k) (if (= (+ found 1) n) k (loop (+ k 1) (+ found 1))) (loop (+ k 1) found))))")
(triangle-number "function" ("triangular")
 "第 n 个三角形数，即 1 到 n 的和"
 "(define (triangular n) (quotient (* n (+ n 1)) 2))")
(average-of-vector "function" ("vector-average")
 "Mean value of the elements of a numeric vector"
 "(define (vector-average v) (/ (vector-sum v) (vector-length v)))")
(matrix-add "function" ("matrix-add")
 "两个同样大小的矩阵逐元素相加"
 "(define (matrix-add a b) (map (lambda (r s) (map + r s)) a b))")
(sort-by-key "function" ("sort-by")
 "Order records by the value a key function extracts from each"
 "(define (sort-by key lst) (sort lst (lambda (a b) (< (key a) (key b)))))")
(sort-strings "function" ("sort-strings")
 "按字典顺序对字符串列表进行排序"
 "(define (sort-strings lst) (sort lst string<?))")
(order-status "constant" ("order-statuses")
 "订单可能处于的各种状态"
 "(define order-statuses '(pending paid shipped delivered cancelled))")
(order-total "function" ("order-total")
 "Total price of an order: quantity times unit price over all lines"
 "(define (order-total lines) (apply + (map (lambda (l) (* (car l) (cdr l))) lines)))")
(queue-length "function" ("queue-length")
 "计算队列中等待的元素个数"
 "(define (queue-length q) (length (car q)))")
(trie-insert "function" ("trie-insert")
 "Add a word to a prefix tree of characters"
 "(define (trie-insert trie word) (if (null? word) (cons '(end) trie) (let ((child (assv (car word) trie))) (cons (cons (car word) (trie-insert (if child (cdr child) '()) (cdr word))) (if child (remove child trie) trie)))))")
(autocomplete "function" ("complete-prefix")
 "根据已输入的前缀，从词表中找出可能的补全"
 "(define (complete-prefix words prefix) (filter (lambda (w) (starts-with? w prefix)) words))")
(spell-suggest "function" ("suggest-spelling")
 "Offer the dictionary words closest to a misspelled word"
 "(define (suggest-spelling dict word) (take (sort-by (lambda (w) (levenshtein w word)) dict) 3))")
(stopwatch "function" ("make-stopwatch")
 "计时器：记录开始时间，返回经过的毫秒数"
 "(define (make-stopwatch now) (let ((start (now))) (lambda () (- (now) start))))")
