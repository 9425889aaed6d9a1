//! Retrying database transactions with sqlx (PostgreSQL).
//!
//! ```toml
//! [dependencies]
//! retry-jitter = { version = "0.1", features = ["sqlx"] } # Rust 1.94 (sqlx 0.9's)
//! sqlx = { version = "0.9", features = ["postgres", "runtime-tokio"] }
//! tokio = { version = "1", features = ["macros", "rt-multi-thread"] }
//! ```
//!
//! The program needs a PostgreSQL server at `DATABASE_URL`.
//! `scripts/with-postgres.sh cargo run --example guide_sqlx --features sqlx` starts a private,
//! throw-away one (installing PostgreSQL from the OS packages when it is missing), runs the
//! program against it, and removes it.
//!
//! ```rust,no_run
#![doc = include_str!("../../examples/guide_sqlx.rs")]
//! ```
//!
//! # Which errors are retried
//!
//! Feature `sqlx` (PostgreSQL over tokio; no TLS backend and no query macros pulled in) implements
//! [`Transient`](crate::Transient) for `sqlx::Error`, and adds [`sqlx::sqlstate`](crate::sqlx::sqlstate)
//! and [`sqlx::classify_sqlstate`](crate::sqlx::classify_sqlstate). The server's SQLSTATE decides:
//!
//! | retried | why |
//! |---|---|
//! | `40001` serialization_failure, `40P01` deadlock_detected | the transaction lost a race, or was the victim that breaks a lock cycle: run again, it commits |
//! | class `08` connection_exception, `57P01` admin_shutdown, `57P02` crash_shutdown, `57P03` cannot_connect_now | a failover, a restart, a session the server ended: the next connection works |
//! | `53300` too_many_connections, `55P03` lock_not_available | a slot or a lock that is busy now, not for ever |
//! | `Io` errors by the io table (refused, reset, cut), `PoolTimedOut`, a `Protocol` error from a dropped connection | the connection failed, not the query |
//!
//! Everything else is returned at once: `23xxx` integrity violations (`23505` unique_violation…),
//! `42xxx` syntax and permission errors, `22xxx` data errors, `RowNotFound`, encode and decode
//! errors, configuration and TLS errors — the same statement fails the same way again. The
//! [`sqlx`](crate::sqlx) module has the full table.
//!
//! # The unit of retry is the whole transaction
//!
//! A serialization failure or a deadlock aborts the transaction on the server: everything it did
//! is undone, and any further statement in it fails (`25P02`). So the retried function runs
//! `begin` … `commit`, and every attempt reads again what it decides on — never retry one
//! statement inside a transaction.
//!
//! **Idempotency.** A write outside a transaction — one auto-committed `INSERT`, a call to another
//! service — that reached the server before the connection broke is done; its retry does it again.
//! The same holds for a connection lost during `COMMIT`: the outcome is unknown, and the retry may
//! run a committed transaction a second time. Give such a write a key made *once*, outside the
//! retried function, and let the database drop the repeat (`INSERT … ON CONFLICT (id) DO NOTHING`,
//! checking `rows_affected()`); the `bank` example keys its ledger that way.
//!
//! **Timeouts.** `timeout` needs an error type with `From<TimedOut>`, which `sqlx::Error` cannot
//! get: wrap it in your own error, or prefer the server's `statement_timeout` and `lock_timeout`
//! (`55P03`, retried), which stop the work on the server too.
//!
//! # The tests and the bank
//!
//! Without a server `cargo test --workspace --all-features` stays green: the database tests are
//! `#[ignore]`d, naming the command that runs them as CI does:
//!
//! ```sh
//! scripts/with-postgres.sh cargo test --all-features --test db -- --ignored
//! scripts/with-postgres.sh cargo run --example bank --features sqlx
//! ```
//!
//! They assert against the real server: 24 concurrent SERIALIZABLE read-modify-writes of one row
//! all commit with the exact final count after their `40001`s are retried; a deadlock's victim is
//! retried once and both transactions apply once; a unique violation is tried exactly once; a
//! session the server terminates mid-transaction is retried on a new connection; a `connect`
//! started while the server is stopped, restarted 1.5 s later, connects after the restart. The
//! `bank` example moves money between eight accounts from twelve concurrent tellers, each transfer
//! one retried transaction, and checks the books:
//!
//! ```text
//! 8 accounts of 1000; 12 tellers make 25 transfers each, concurrently, under SERIALIZABLE
//! 300 transfers in 2.5s: 296 moved, 4 declined (not enough money), 0 already done, 0 gave up
//! conflicts retried: 172 — 170 serialization failures (40001), 2 deadlocks (40P01), 0 other; 472 transactions run, at most 7 for one transfer
//! books: total 8000 (opened with 8000), 296 transfers in the ledger, 8 of 8 balances match it
//! the books balance
//! ```
