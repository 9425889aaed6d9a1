//! The pairs of functions the success-path measurements compare: each `#[retry]` function
//! against its identical hand-written twin. Shared by `benches/overhead.rs` (criterion's
//! times) and `examples/instructions.rs` (callgrind's instruction counts), so both measure the
//! same code.
//!
//! The functions are `#[inline(never)]` and their argument is `black_box`ed at the call, so no
//! body needs a `black_box` of its own: one inside a body would keep its value in a stack slot,
//! which real code does not do, and which costs the sync attribute a stack frame (the cold
//! retry call makes the function a caller, and a caller cannot keep locals below the stack
//! pointer). The `on_stack` pair measures exactly that worst case.

use std::hint::black_box;

use retry_jitter::retry;

/// The work of every variant: one multiply and a test that never fails.
#[inline(always)]
pub fn work(x: u64) -> Result<u64, u64> {
    let y = x.wrapping_mul(31);
    if y == u64::MAX {
        Err(y)
    } else {
        Ok(y)
    }
}

/// The same work on a value the body keeps in a stack slot.
#[inline(always)]
fn work_on_stack(x: u64) -> Result<u64, u64> {
    work(black_box(x))
}

#[inline(never)]
pub fn plain(x: &u64) -> Result<u64, u64> {
    work(*x)
}

#[retry]
#[inline(never)]
pub fn annotated(x: &u64) -> Result<u64, u64> {
    work(*x)
}

#[inline(never)]
pub fn plain_by_value(x: u64) -> Result<u64, u64> {
    work(x)
}

#[retry]
#[inline(never)]
pub fn annotated_by_value(x: u64) -> Result<u64, u64> {
    work(x)
}

#[inline(never)]
pub fn plain_on_stack(x: &u64) -> Result<u64, u64> {
    work_on_stack(*x)
}

#[retry]
#[inline(never)]
pub fn annotated_on_stack(x: &u64) -> Result<u64, u64> {
    work_on_stack(*x)
}

#[inline(never)]
pub async fn plain_async(x: &u64) -> Result<u64, u64> {
    work(*x)
}

#[retry]
#[inline(never)]
pub async fn annotated_async(x: &u64) -> Result<u64, u64> {
    work(*x)
}

// The same two without a budget (`budget = none`): what the function's own budget, on by
// default, adds to a success (issue 53: at most +25 over the plain function).

#[retry(budget = none)]
#[inline(never)]
pub fn annotated_no_budget(x: &u64) -> Result<u64, u64> {
    work(*x)
}

#[retry(budget = none)]
#[inline(never)]
pub async fn annotated_async_no_budget(x: &u64) -> Result<u64, u64> {
    work(*x)
}

// A body with a little real work: parse a number, as a handler parses a field.

#[inline(never)]
pub fn plain_parse(s: &str) -> Result<u64, std::num::ParseIntError> {
    s.parse()
}

/// `plain_parse` again, as a control. Identical code is folded into one function at link time,
/// so this is the same machine code under a second name: what the bench reads between the two
/// is the noise of the measurement itself, with no code of ours and no placement in it.
#[inline(never)]
pub fn plain_parse_twin(s: &str) -> Result<u64, std::num::ParseIntError> {
    s.parse()
}

#[retry]
#[inline(never)]
pub fn annotated_parse(s: &str) -> Result<u64, std::num::ParseIntError> {
    s.parse()
}

#[inline(never)]
pub async fn plain_parse_async(s: &str) -> Result<u64, std::num::ParseIntError> {
    s.parse()
}

#[retry]
#[inline(never)]
pub async fn annotated_parse_async(s: &str) -> Result<u64, std::num::ParseIntError> {
    s.parse()
}

/// The identity, as a macro of the user's: `#[retry]` cannot see whether a macro expands to a
/// `return`, so a body that calls one keeps its attempt in a nested `async` block.
macro_rules! same {
    ($e:expr) => {
        $e
    };
}

#[retry]
#[inline(never)]
pub async fn nested_parse_async(s: &str) -> Result<u64, std::num::ParseIntError> {
    same!(s.parse())
}

// An async body that really suspends: it awaits a tokio semaphore (uncontended, so it is ready
// at once, but the compiler cannot know), as real async fns await their I/O.

static PERMITS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(1);

#[inline(never)]
pub async fn plain_await(x: &u64) -> Result<u64, u64> {
    let _permit = PERMITS.acquire().await.map_err(|_| 0u64)?;
    work(*x)
}

#[retry]
#[inline(never)]
pub async fn annotated_await(x: &u64) -> Result<u64, u64> {
    let _permit = PERMITS.acquire().await.map_err(|_| 0u64)?;
    work(*x)
}

// `timeout`: each attempt raced against a timer of its limit. A timeout needs an error type with
// `From<TimedOut>`, so these bodies fail with `Failed`, a `u64` as the pairs above (same size,
// same layout), and each has its plain twin and its `#[retry]` (no `timeout`) twin with that
// error: the rows compare `timeout` with both.

/// The error of the `timeout` pairs: what a cut attempt becomes.
#[derive(Debug)]
pub struct Failed(#[allow(dead_code)] u64);

impl From<retry_jitter::TimedOut> for Failed {
    fn from(_: retry_jitter::TimedOut) -> Self {
        Failed(0)
    }
}

#[inline(never)]
pub async fn plain_async_failed(x: &u64) -> Result<u64, Failed> {
    work(*x).map_err(Failed)
}

#[retry]
#[inline(never)]
pub async fn annotated_async_failed(x: &u64) -> Result<u64, Failed> {
    work(*x).map_err(Failed)
}

/// The default timer, `tokio::time::sleep` behind an `async fn`: a future that holds the limit
/// and makes tokio's `Sleep` when first polled, which an attempt ready at once never lets it be.
#[retry(timeout = "1s")]
#[inline(never)]
pub async fn timeout_async(x: &u64) -> Result<u64, Failed> {
    work(*x).map_err(Failed)
}

/// A timer made when the attempt starts: `tokio::time::sleep` itself, which builds its `Sleep`
/// (the runtime's handle, the clock read for the deadline) when called. Needs a tokio runtime
/// with its time driver, ready or not.
#[retry(timeout = "1s", sleep = tokio::time::sleep)]
#[inline(never)]
pub async fn timeout_async_eager(x: &u64) -> Result<u64, Failed> {
    work(*x).map_err(Failed)
}

/// Hedged: the first attempt runs in place and a hedge timer (the default, an `async fn`
/// holding its delay) is armed beside it; an attempt ready at once never polls it.
#[retry(hedge = "50ms")]
#[inline(never)]
pub async fn hedge_async(x: &u64) -> Result<u64, Failed> {
    work(*x).map_err(Failed)
}

#[inline(never)]
pub async fn plain_await_failed(x: &u64) -> Result<u64, Failed> {
    let _permit = PERMITS.acquire().await.map_err(|_| Failed(0))?;
    work(*x).map_err(Failed)
}

#[retry]
#[inline(never)]
pub async fn annotated_await_failed(x: &u64) -> Result<u64, Failed> {
    let _permit = PERMITS.acquire().await.map_err(|_| Failed(0))?;
    work(*x).map_err(Failed)
}

#[retry(timeout = "1s")]
#[inline(never)]
pub async fn timeout_await(x: &u64) -> Result<u64, Failed> {
    let _permit = PERMITS.acquire().await.map_err(|_| Failed(0))?;
    work(*x).map_err(Failed)
}
