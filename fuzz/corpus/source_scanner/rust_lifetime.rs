fn f<'a>(x: &'a str) { lock.New(d, "rust-name"); }
