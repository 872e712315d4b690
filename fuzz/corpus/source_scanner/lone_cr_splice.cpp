pglock::Lock(p, "a\b");
pglock::Lock(p, "after");
