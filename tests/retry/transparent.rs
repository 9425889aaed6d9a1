//! Transparent retries (gRFC A6) through the one loop, as the closure API runs it: a stand-in
//! classifier says which errors prove their attempt never reached the server, as only gRPC's
//! layer does in the crate.

use std::sync::Mutex;
use std::time::Duration;

use retry_jitter::__private::Transparent;
use retry_jitter::hedge::Hedge;
use retry_jitter::hooks::{Classify, HookFuture};
use retry_jitter::{Decision, Jitter, Policy, Retry, RetryEvent, RetryStats};
use tokio::time::Instant;

const MS: Duration = Duration::from_millis(1);

/// An error that proves its attempt never reached the server (`Refused`), or one that may have
/// (`Down`).
#[derive(Debug, PartialEq, Eq)]
enum Wire {
    Down,
    Refused,
}

/// Retries every error; a `Refused` one is sent again transparently (gRPC's layer is the one
/// classifier that says so: this stands in for it).
struct Refusals;

impl Classify<Wire> for Refusals {
    fn classify(&self, _: &Wire) -> Decision {
        Decision::Retry
    }
    fn transparent(&self, e: &Wire) -> Transparent {
        match e {
            Wire::Refused => Transparent::NotSeenByServer,
            Wire::Down => Transparent::No,
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_transparent_retry_after_a_counted_one_is_told_to_no_async_hook() {
    let told: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let figures: Mutex<Option<RetryStats>> = Mutex::new(None);
    let policy = Policy::new()
        .with_attempts(3)
        .with_base(100 * MS)
        .with_jitter(Jitter::None);
    let r = Retry::new(policy)
        .on(Refusals)
        .notify_async(|e: &Wire, ev: &RetryEvent| -> HookFuture<'_> {
            told.lock()
                .unwrap()
                .push(format!("{e:?} #{} after {:?}", ev.attempt, ev.delay));
            Box::pin(async {})
        })
        .stats_async(|s: &RetryStats| -> HookFuture<'_> {
            *figures.lock().unwrap() = Some(*s);
            Box::pin(async {})
        });
    // A counted failure, then one refused (sent again at once), then a success.
    let script = Mutex::new(vec![Ok(7), Err(Wire::Refused), Err(Wire::Down)]);
    let started = Instant::now();
    let out = r
        .call_async(|| {
            let next = script.lock().unwrap().pop().unwrap();
            async move { next }
        })
        .await;
    assert_eq!(out, Ok(7));
    assert_eq!(*told.lock().unwrap(), ["Down #1 after 100ms"]);
    let s = figures
        .lock()
        .unwrap()
        .expect("the stats hook heard the call");
    // Two counted attempts; the refused one is a transparent retry, counted apart.
    assert_eq!((s.attempts, s.transparent_retries), (2, 1));
    assert_eq!(s.waited, 100 * MS, "the transparent retry waited nothing");
    assert_eq!(started.elapsed(), 100 * MS);
}

/// A call's copies, one after another, each told the script's next answer; what the stats
/// hook heard of the call.
async fn hedged(script: Vec<Result<u32, Wire>>) -> (Result<u32, Wire>, RetryStats, u32) {
    let figures: Mutex<Option<RetryStats>> = Mutex::new(None);
    let sent = Mutex::new(0);
    let policy = Policy::new()
        .with_attempts(2)
        .with_base(100 * MS)
        .with_jitter(Jitter::None);
    let r = Retry::new(policy)
        .on(Refusals)
        .hedge(Hedge::After(Duration::from_secs(1)))
        .stats(|s: &RetryStats| *figures.lock().unwrap() = Some(*s));
    let script = Mutex::new(script);
    let out = r
        .call_async(|| {
            *sent.lock().unwrap() += 1;
            let next = script.lock().unwrap().pop().unwrap();
            async move { next }
        })
        .await;
    let s = figures
        .lock()
        .unwrap()
        .expect("the stats hook heard the call");
    let sent = *sent.lock().unwrap();
    (out, s, sent)
}

#[tokio::test(start_paused = true)]
async fn a_hedged_call_makes_no_transparent_retry() {
    // The first copy is refused with none beside it: a counted failure, retried after the
    // backoff, as when a copy fails while others run. A resend would have taken the second
    // copy's place uncounted.
    let started = Instant::now();
    let (out, s, sent) = hedged(vec![Ok(7), Err(Wire::Refused)]).await;
    assert_eq!(out, Ok(7));
    assert_eq!((sent, s.attempts, s.transparent_retries), (2, 2, 0));
    assert_eq!(started.elapsed(), 100 * MS, "the retry waited its backoff");
}
