#![deny(warnings)]
// An argument the body never names, used only in a key's expression, is used: no
// `unused variable` (issue 11, point 8). Sync and async, attempts inline and nested, hedged and
// timed; and lint attributes on an argument hold for it as in the function without `#[retry]`.
use retry_jitter::{retry, Policy, RetryEvent, TimedOut};
use std::sync::atomic::{AtomicU32, Ordering};
use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, PartialEq)]
enum Error {
    Busy(u32),
    TimedOut,
}

impl From<TimedOut> for Error {
    fn from(_: TimedOut) -> Self {
        Error::TimedOut
    }
}

thread_local! {
    static LOG: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

fn log(line: String) {
    LOG.with(|l| l.borrow_mut().push(line));
}

fn logged() -> Vec<String> {
    LOG.with(|l| l.take())
}

/// Fails until its `n`th call.
fn succeed_at(calls: &Cell<u32>, n: u32) -> Result<u32, Error> {
    calls.set(calls.get() + 1);
    if calls.get() < n {
        Err(Error::Busy(calls.get()))
    } else {
        Ok(calls.get())
    }
}

macro_rules! call {
    ($e:expr) => {
        $e
    };
}

#[retry(base = "0ns", attempts = tries, notify = |e: &Error, ev: &RetryEvent| log(format!("{tag}: {e:?} #{}", ev.attempt)))]
fn sync_keys(tries: u32, tag: String, calls: &Cell<u32>, n: u32) -> Result<u32, Error> {
    succeed_at(calls, n)
}

// By value, a `move` attempt and no hook borrowing: the key reads a `Copy` argument.
#[retry(base = base, attempts = tries)]
fn sync_durations(base: Duration, tries: u32, calls: &Cell<u32>) -> Result<u32, Error> {
    succeed_at(calls, 3)
}

#[retry(base = "0ns", attempts = tries, notify = |e: &Error, ev: &RetryEvent| log(format!("{tag}: {e:?} #{}", ev.attempt)))]
async fn inline_keys(tries: u32, tag: String, calls: &Cell<u32>, n: u32) -> Result<u32, Error> {
    let got = succeed_at(calls, n)?;
    Ok(got)
}

// A macro of the user's: the attempt is a nested `async` block.
#[retry(base = "0ns", attempts = tries, give_up = |e: &Error, _| log(format!("{tag}: {e:?}")))]
async fn nested_keys(tries: u32, tag: String, calls: &Cell<u32>, n: u32) -> Result<u32, Error> {
    call!(succeed_at(calls, n))
}

#[retry(base = "0ns", attempts = tries, hedge = after)]
async fn hedged_keys(tries: u32, after: Duration, calls: Arc<AtomicU32>) -> Result<u32, Error> {
    let n = calls.fetch_add(1, Ordering::Relaxed) + 1;
    if n < 2 { Err(Error::Busy(n)) } else { Ok(n) }
}

#[retry(timeout = limit, policy = policy)]
async fn timed_keys(limit: Duration, policy: Policy, calls: &Cell<u32>) -> Result<u32, Error> {
    succeed_at(calls, 2)
}

// Not `Clone`: an argument no attempt uses is not copied for it.
struct Limits {
    tries: u32,
}

#[retry(base = "0ns", attempts = limits.tries)]
fn not_clone(limits: Limits, calls: &Cell<u32>) -> Result<u32, Error> {
    succeed_at(calls, 9)
}

// Not `Clone` either, and taken by value: a body that does not use `self` needs no copy of it.
struct Client {
    policy: Policy,
}

impl Client {
    #[retry(policy = self.policy)]
    fn by_value(self, calls: &Cell<u32>) -> Result<u32, Error> {
        succeed_at(calls, 2)
    }

    // A receiver each attempt would clone, used only by a key: not cloned, not warned about.
    #[retry(policy = self.policy)]
    fn sync_self(self: Arc<Self>, calls: &Cell<u32>) -> Result<u32, Error> {
        succeed_at(calls, 2)
    }

    #[retry(policy = self.policy)]
    async fn async_self(self: Arc<Self>, calls: &Cell<u32>) -> Result<u32, Error> {
        succeed_at(calls, 2)
    }
}

// Lint attributes on an argument: on the argument and on each attempt's copy of it.
#[retry(base = "0ns")]
fn lint_attributes(
    #[allow(unused_variables)] unused: String,
    #[expect(unused_variables)] expected: String,
    #[allow(unused_mut)] mut kept: String,
    #[allow(non_snake_case)] Shouting: String,
    calls: &Cell<u32>,
) -> Result<u32, Error> {
    let _ = (&kept, &Shouting);
    succeed_at(calls, 2)
}

#[retry(base = "0ns")]
async fn lint_attributes_async(
    #[allow(unused_variables)] unused: String,
    #[expect(unused_variables)] expected: String,
    #[allow(unused_mut)] mut kept: String,
    calls: &Cell<u32>,
) -> Result<u32, Error> {
    let _ = &kept;
    succeed_at(calls, 2)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let calls = Cell::new(0);
    assert_eq!(sync_keys(2, "sync".into(), &calls, 5), Err(Error::Busy(2)));
    assert_eq!((calls.take(), logged()), (2, vec!["sync: Busy(1) #1".to_owned()]));
    assert_eq!(sync_keys(5, "sync".into(), &calls, 3), Ok(3));
    assert_eq!(calls.take(), 3);
    assert_eq!(logged().len(), 2);
    assert_eq!(sync_durations(Duration::ZERO, 4, &calls), Ok(3));
    assert_eq!(calls.take(), 3);

    assert_eq!(inline_keys(3, "inline".into(), &calls, 9).await, Err(Error::Busy(3)));
    assert_eq!((calls.take(), logged().len()), (3, 2));
    assert_eq!(nested_keys(2, "nested".into(), &calls, 9).await, Err(Error::Busy(2)));
    assert_eq!((calls.take(), logged()), (2, vec!["nested: Busy(2)".to_owned()]));

    let hedged = Arc::new(AtomicU32::new(0));
    assert_eq!(hedged_keys(3, Duration::from_secs(60), hedged.clone()).await, Ok(2));
    assert_eq!(hedged.load(Ordering::Relaxed), 2);
    let policy = Policy::new().with_base(Duration::ZERO).with_attempts(3);
    assert_eq!(timed_keys(Duration::from_secs(60), policy, &calls).await, Ok(2));
    assert_eq!(calls.take(), 2);

    assert_eq!(not_clone(Limits { tries: 2 }, &calls), Err(Error::Busy(2)));
    assert_eq!(calls.take(), 2);
    assert_eq!(Client { policy }.by_value(&calls), Ok(2));
    assert_eq!(calls.take(), 2);

    let client = Arc::new(Client { policy });
    assert_eq!(client.clone().sync_self(&calls), Ok(2));
    assert_eq!(calls.take(), 2);
    assert_eq!(client.async_self(&calls).await, Ok(2));
    assert_eq!(calls.take(), 2);

    let s = || String::from("s");
    assert_eq!(lint_attributes(s(), s(), s(), s(), &calls), Ok(2));
    assert_eq!(calls.take(), 2);
    assert_eq!(lint_attributes_async(s(), s(), s(), &calls).await, Ok(2));
    assert_eq!(calls.take(), 2);
}
