(if)
