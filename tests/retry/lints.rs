//! Generated code is lint-clean: CI runs clippy on this file with pedantic lints denied, and
//! rustc with `warnings` and `unused_qualifications` denied.
#![deny(warnings, unused_qualifications, clippy::pedantic)]

use retry_jitter::{retry, Decision, Policy, RetryEvent};

#[derive(Debug, Clone, PartialEq, Eq)]
struct Error(u32);

fn classify(e: &Error) -> Decision {
    Decision::from(e.0 >= 500)
}

fn log(e: &Error, ev: &RetryEvent) {
    eprintln!("{}: {e:?} ({:?})", ev.function, ev.delay);
}

struct Client {
    policy: Policy,
    seen: Vec<u32>,
}

impl Client {
    #[retry(policy = self.policy, on = classify, notify = log)]
    fn call(&mut self, id: u32, tag: String) -> Result<String, Error> {
        self.seen.push(id);
        if self.seen.len() < 2 {
            return Err(Error(503));
        }
        Ok(tag)
    }

    #[retry(base = "0ns", attempts = 2)]
    async fn call_async(&self, id: &u32) -> Result<u32, Error> {
        Ok(*id + u32::try_from(self.seen.len()).map_err(|_| Error(0))?)
    }

    #[retry(base = "0ns", attempts = 3)]
    async fn call_inline(&self, id: &str) -> Result<u32, Error> {
        if id.is_empty() {
            return Err(Error(400));
        }
        let n: u32 = id.parse().map_err(|_| Error(0))?;
        Ok(u32::try_from(self.seen.len()).map_err(|_| Error(0))?.max(n))
    }
}

// Receivers with a copy per attempt (the body's `self` renamed), a hook that borrows `self`
// (the sync attempt then borrows too), a nested attempt (a macro of the user's).
#[derive(Clone)]
struct Shared {
    limit: u32,
}

macro_rules! at_most {
    ($n:expr, $limit:expr) => {
        $n.min($limit)
    };
}

impl Shared {
    #[retry(base = "0ns", on = |e: &Error| e.0 < self.limit)]
    fn take(self: std::sync::Arc<Self>, n: u32) -> Result<u32, Error> {
        Ok(at_most!(n, self.limit))
    }

    #[retry(base = "0ns")]
    async fn take_async(self: std::sync::Arc<Self>, n: u32) -> Result<u32, Error> {
        Ok(at_most!(n, self.limit))
    }

    #[retry(base = "0ns")]
    fn pinned(self: std::pin::Pin<&mut Self>) -> Result<u32, Error> {
        Ok(self.get_mut().limit)
    }
}

// A `#[track_caller]` sync fn: its retry loop written in the function, the attempt inline, with
// a `?`, a `return`, a time budget (the after-wait check) and an argument used only by a key.
#[retry(base = "0ns", attempts = tries, max_elapsed = "10s", on = classify)]
#[track_caller]
fn located(id: &str, tries: u32, seen: &mut Vec<u32>) -> Result<u32, Error> {
    seen.push(std::panic::Location::caller().line());
    if id.is_empty() {
        return Err(Error(503));
    }
    Ok(id.parse().map_err(|_| Error(400))?)
}

#[tokio::test]
async fn lint_clean_expansions_still_retry() {
    let mut seen = Vec::new();
    assert_eq!(located("", 2, &mut seen), Err(Error(503)));
    assert_eq!(located("7", 2, &mut seen), Ok(7));
    let line = line!() - 1;
    assert_eq!(seen, [line - 1, line - 1, line]);
    let shared = std::sync::Arc::new(Shared { limit: 5 });
    assert_eq!(std::sync::Arc::clone(&shared).take(9), Ok(5));
    assert_eq!(std::sync::Arc::clone(&shared).take_async(3).await, Ok(3));
    let mut own = Shared { limit: 4 };
    assert_eq!(std::pin::Pin::new(&mut own).pinned(), Ok(4));
    let mut c = Client {
        policy: Policy::new().with_base(std::time::Duration::ZERO),
        seen: Vec::new(),
    };
    assert_eq!(c.call(1, "a".to_owned()), Ok("a".to_owned()));
    assert_eq!(c.seen, [1, 1]);
    assert_eq!(c.call_async(&1).await, Ok(3));
    assert_eq!(c.call_inline("1").await, Ok(2));
    assert_eq!(c.call_inline("").await, Err(Error(400)));
}

async fn log_async(e: &Error, ev: &RetryEvent) {
    eprintln!("{}: {e:?} ({:?})", ev.function, ev.delay);
}

// Awaited hooks: a path sorted by its type, async closures, and the recorder they read.
#[retry(base = "0ns", notify = log_async, give_up = async |e, _| eprintln!("{e:?}"), stats = async |s| eprintln!("{}", s.attempts))]
async fn awaited_hooks(n: u32) -> Result<u32, Error> {
    if n == 0 {
        Err(Error(503))
    } else {
        Ok(n)
    }
}

#[test]
fn awaited_hooks_compile_clean() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    assert_eq!(rt.block_on(awaited_hooks(2)), Ok(2));
}
