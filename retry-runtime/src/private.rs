//! What `#[retry]`'s expansion calls. Not a public API: names and signatures change freely.

pub use core::ops::ControlFlow;
pub use core::option::Option;
pub use core::time::Duration;

// What the expansion names, and the bounds and guard types a `Retry`'s type carries that
// no user writes.
pub use crate::fleet::{Budget, DefaultBudget};
pub use crate::policy::deadline::Started;
pub use crate::policy::Clock;
pub use crate::policy::Unset;
pub use crate::policy::{
    AcceptOk, GiveUp, Jitter, Policy, Resend, RetryAll, RetryEvent, RetryStats, Transparent,
};
pub use crate::run::guard::{BreakerGuard, Cancelling, Guard, IntoErr, ThrottleGuard};
pub use crate::run::hedge::config::HedgeWith;
pub use crate::run::hedge::{Discard, Hedge, LatencyHistogram};
pub use crate::run::hooks::{GiveUpHook, Hooks, Notify, Trace};
#[cfg(feature = "tracing")]
pub use crate::run::hooks::{Render, Rendered, Tracer, Unrendered};
pub use crate::run::loops::{start_time, IsResult, LoopState, Verdict};
pub use crate::run::question_mark::Branch;
pub use crate::run::stats::{ReadAfter, Recorder, StatsHook};
pub use crate::run::timeout::limit::AttemptTimeout;
pub use crate::run::timeout::{poll_race, poll_race_within, Limit, Race};
pub use crate::run::wait::sleep_boxed;
pub use crate::sleep::{now, sleep_blocking};
#[cfg(feature = "tokio")]
pub use crate::sleep::{tokio_now, tokio_sleep};
pub use entry::Loop;

// One file per family.
//
// `#[path]`: this module is the file `private.rs` (`lib.rs` mounts it as `__private`).
//
// Without it, its submodules would be looked for beside it.
#[path = "private/awaited.rs"]
mod awaited;
#[path = "private/clone.rs"]
mod clone;
#[path = "private/default_on.rs"]
mod default_on;
#[path = "private/entry.rs"]
mod entry;
#[path = "private/hooks.rs"]
mod hooks;
#[path = "private/limits.rs"]
mod limits;
#[cfg(feature = "tracing")]
#[path = "private/render.rs"]
mod render;

pub use awaited::*;
pub use clone::*;
pub use default_on::*;
pub use hooks::*;
pub use limits::*;
#[cfg(feature = "tracing")]
pub use render::*;
