lock.New(d, `tmpl ${x}`);
lock.New(d, "ts-name");
