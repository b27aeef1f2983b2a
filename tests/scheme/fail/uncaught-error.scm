(error "Something failed:" 42 (quote (a b)))
