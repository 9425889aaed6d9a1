//! The retry loop as `#[retry]` and `Retry` run it, one test binary: attempts, waits and the
//! error returned, the default `on`, the hooks (`notify`, `give_up`, `stats`, awaited ones too),
//! `on_ok` and `attempt`, cancelling, deadlines, hedging, `Send` futures, and lint-clean
//! expansions.

mod async_hooks;
mod behaviour;
mod cancel;
mod deadlines;
mod default_on;
mod give_up;
mod hedging;
mod lints;
mod on_ok;
mod send;
mod stats;
mod transparent;
