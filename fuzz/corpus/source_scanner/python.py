# lock.New(d, "comment")
lock.New(d, """triple
quoted""")
lock.RunOnce(ctx, d, 'single', f)
