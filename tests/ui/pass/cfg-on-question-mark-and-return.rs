#![deny(warnings)]
// Issue 17, class 3: an attribute on a `?` or `return` statement holds in the rewritten attempt
// as in the function without `#[retry]`. A `#[cfg]` that is off removes the statement: here a
// `?` that would fail every attempt and a `return` that would end it, neither of which may run.
use retry_jitter::retry;
use std::cell::Cell;

thread_local! {
    static TRACED: Cell<u32> = const { Cell::new(0) };
    static CALLS: Cell<u32> = const { Cell::new(0) };
}

fn bump(cell: &'static std::thread::LocalKey<Cell<u32>>) -> u32 {
    cell.with(|c| {
        c.set(c.get() + 1);
        c.get()
    })
}

// Fails when it runs: a `?` on it that is compiled out must not fail the attempt.
fn trace_op() -> Result<(), u32> {
    bump(&TRACED);
    Err(0)
}

async fn trace_op_async() -> Result<(), u32> {
    trace_op()
}

// The attempt is written inline (an `async fn`, no macro in the body).
#[retry(attempts = 3, base = "0ns")]
async fn acquire() -> Result<u32, u32> {
    #[cfg(any())]
    trace_op_async().await?;
    #[cfg(any())]
    return Err(99);
    // On: kept, and run once per attempt.
    #[cfg(all())]
    let n = bump(&CALLS);
    if n < 3 { Err(n) } else { Ok(n) }
}

// A sync `#[track_caller]` fn is written inline too.
#[retry(attempts = 3, base = "0ns")]
#[track_caller]
fn acquire_sync() -> Result<u32, u32> {
    #[cfg(any())]
    trace_op()?;
    #[cfg(any())]
    return Err(99);
    let n = bump(&CALLS);
    if n < 6 { Err(n) } else { Ok(n) }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    assert_eq!(acquire().await, Ok(3));
    assert_eq!(acquire_sync(), Ok(6));
    assert_eq!(CALLS.with(Cell::get), 6);
    assert_eq!(TRACED.with(Cell::get), 0);
}
