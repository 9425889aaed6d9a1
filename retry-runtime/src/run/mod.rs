//! The one retry loop: the per-call [`RetryState`](state::RetryState), the step after each
//! attempt (classify, decide, draw, charge the budget, tell the hooks), the loops the macro's
//! expansion and the closure API drive, hedging, timeouts, timers and their clocks, and what
//! the loop reports (hooks, traces, metrics).

pub(crate) mod account;
pub(crate) mod awaiting;
pub(crate) mod guard;
pub mod hedge;
pub(crate) mod hooks;
pub(crate) mod loops;
#[cfg(feature = "metrics")]
pub mod metrics;
pub(crate) mod question_mark;
pub mod sleep;
pub(crate) mod state;
pub(crate) mod stats;
pub(crate) mod step;
pub mod testing;
pub mod timeout;
pub(crate) mod trace;
pub(crate) mod wait;
