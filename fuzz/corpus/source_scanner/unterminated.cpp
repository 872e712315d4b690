pglock::Lock(p, "never closed
