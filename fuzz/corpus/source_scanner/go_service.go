package main

import (
	"context"
	"gokit/db/lock"
)

// lock.New(d, "in-a-comment") is not a call
func run(ctx context.Context, d lock.DB) error {
	l := lock.New(d, "orders.daily-rollup", lock.WithTimeout(5))
	_ = lock.RunOnce(ctx, d, "billing." + "close", f)
	_ = lock.RunBlocking(ctx, d, `raw\name`, f)
	_ = lock.New(d, "\101\x42\u00e9\U0001F512", nil)
	_ = lock.New(d, name, nil)
	svc := service.WithSingletonCron("0 3 * * *", "nightly.report", job)
	return nil
}
