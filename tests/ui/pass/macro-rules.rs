// Functions made by `macro_rules!`: their fragments arrive in invisible groups, which `#[retry]`
// looks through wherever it reads tokens (the body, a literal key value, a word, a path).
use retry_jitter::retry;
use std::cell::Cell;

thread_local! {
    static CALLS: Cell<u32> = const { Cell::new(0) };
}

fn call() -> u32 {
    CALLS.with(|c| {
        c.set(c.get() + 1);
        c.get()
    })
}

fn calls() -> u32 {
    CALLS.with(|c| c.replace(0))
}

macro_rules! retried {
    ($name:ident, $attempts:literal, $base:literal, $cap:literal, $jitter:expr, $krate:literal, $ret:ty, $body:block) => {
        #[retry(attempts = $attempts, base = $base, cap = $cap, jitter = $jitter, crate = $krate)]
        fn $name() -> $ret $body
    };
}

macro_rules! retried_async {
    ($name:ident, $arg:ident, $cap:literal, $ret:ty, $body:block) => {
        #[retry(attempts = 3, base = "0ns", cap = $cap)]
        async fn $name($arg: &str) -> $ret $body
    };
}

retried!(sync_fn, 3, "0ns", "1ms", none, "::retry_jitter", Result<u32, u32>, {
    let n = call();
    if n < 3 { Err(n) } else { Ok(n) }
});

retried_async!(async_fn, input, "1ms", Result<u32, std::num::ParseIntError>, {
    // `?` in a body passed as `$body:block`: ends the attempt, which is retried.
    let n: u32 = if call() < 3 { "x".parse()? } else { input.parse()? };
    Ok(n)
});

// A hedge percentile passed as `$hedge:literal` is read as a percentile, not a duration.
macro_rules! hedged {
    ($name:ident, $hedge:literal) => {
        #[retry(attempts = 2, hedge = $hedge)]
        async fn $name() -> Result<u32, u32> {
            Ok(7)
        }
    };
}

hedged!(hedged_p95, "p95");
hedged!(hedged_after, "5ms");

#[tokio::main(flavor = "current_thread")]
async fn main() {
    assert_eq!(hedged_p95().await, Ok(7));
    assert_eq!(hedged_after().await, Ok(7));
    assert_eq!(sync_fn(), Ok(3));
    assert_eq!(calls(), 3);
    assert_eq!(async_fn("7").await, Ok(7));
    assert_eq!(calls(), 3);
}
