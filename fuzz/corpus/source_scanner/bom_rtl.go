package x
lock.New(d, "‏name")
