(list 1 #\nosuchchar)
