(string->symbol 5)
