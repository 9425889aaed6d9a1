//! `notify`, `give_up` and `stats` given an async closure or an `async fn`, in an `async fn`:
//! awaited where a sync hook is called (before the wait; at the give-up; at the end), and a
//! slow hook's time is the call's.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use retry_jitter::{retry, GiveUp, GiveUpReason, RetryEvent, RetryStats};
use tokio::time::Instant;

#[derive(Debug, PartialEq, Eq)]
struct Down(u32);

const MS: Duration = Duration::from_millis(1);

/// What the hooks of each test heard, in order, with the paused clock's time since its start.
static HEARD: Mutex<Vec<(&'static str, String)>> = Mutex::new(Vec::new());

fn heard(function: &str) -> Vec<String> {
    let heard = HEARD.lock().unwrap();
    heard
        .iter()
        .filter(|(f, _)| *f == function)
        .map(|(_, s)| s.clone())
        .collect()
}

async fn log_retry(e: &Down, ev: &RetryEvent) {
    // A hook that writes somewhere slow: 50 ms.
    tokio::time::sleep(50 * MS).await;
    HEARD
        .lock()
        .unwrap()
        .push((ev.function, format!("retry {} after {:?}", e.0, ev.delay)));
}

async fn log_give_up(e: &Down, g: &GiveUp) {
    tokio::time::sleep(50 * MS).await;
    HEARD.lock().unwrap().push((
        g.function,
        format!("gave up on {} ({:?}, {} calls)", e.0, g.reason, g.calls),
    ));
}

async fn log_stats(s: &RetryStats) {
    tokio::time::sleep(50 * MS).await;
    HEARD.lock().unwrap().push((
        s.function,
        format!("{} attempts, waited {:?}", s.attempts, s.waited),
    ));
}

#[retry(attempts = 3, base = "100ms", jitter = none, notify = log_retry, give_up = log_give_up, stats = log_stats)]
async fn async_fns(calls: &AtomicU32) -> Result<(), Down> {
    Err(Down(calls.fetch_add(1, Ordering::SeqCst) + 1))
}

#[tokio::test(start_paused = true)]
async fn async_fn_hooks_are_awaited_in_order_and_their_time_is_the_calls() {
    let calls = AtomicU32::new(0);
    let started = Instant::now();
    assert_eq!(async_fns(&calls).await, Err(Down(3)));
    assert_eq!(
        heard("async_fns"),
        [
            "retry 1 after 100ms",
            "retry 2 after 200ms",
            "gave up on 3 (Attempts, 3 calls)",
            "3 attempts, waited 300ms",
        ]
    );
    // Two notify hooks of 50 ms before the waits (100 + 200 ms), then give_up and stats.
    assert_eq!(started.elapsed(), 500 * MS);
}

#[retry(
    attempts = 3,
    base = "100ms",
    jitter = none,
    notify = async |e: &Down, ev: &RetryEvent| {
        tokio::time::sleep(10 * MS).await;
        HEARD.lock().unwrap().push(("closures", format!("retry {} after {:?}", e.0, ev.delay)));
    },
    give_up = async |e, g| {
        HEARD.lock().unwrap().push(("closures", format!("gave up on {} ({:?})", e.0, g.reason)));
    },
    stats = async |s| {
        HEARD.lock().unwrap().push(("closures", format!("{} attempts, elapsed {:?}", s.attempts, s.elapsed)));
    },
)]
async fn closures(calls: &AtomicU32) -> Result<u32, Down> {
    let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
    if n < 3 {
        Err(Down(n))
    } else {
        Ok(n)
    }
}

#[tokio::test(start_paused = true)]
async fn async_closures_get_their_signatures_and_a_success_skips_give_up() {
    let calls = AtomicU32::new(0);
    assert_eq!(closures(&calls).await, Ok(3));
    assert_eq!(
        heard("closures"),
        [
            "retry 1 after 100ms",
            "retry 2 after 200ms",
            // The two 10 ms hooks and the waits, before the last attempt.
            "3 attempts, elapsed 320ms",
        ]
    );
}

fn sync_stats(s: &RetryStats) {
    HEARD
        .lock()
        .unwrap()
        .push((s.function, format!("sync: {} attempts", s.attempts)));
}

#[retry(attempts = 2, base = "0ms", stats = sync_stats, give_up = log_give_up, hedge = "10ms")]
async fn hedged(calls: &AtomicU32) -> Result<(), Down> {
    Err(Down(calls.fetch_add(1, Ordering::SeqCst) + 1))
}

#[tokio::test(start_paused = true)]
async fn a_sync_path_stays_sync_and_a_hedged_fn_awaits_give_up() {
    let calls = AtomicU32::new(0);
    assert_eq!(hedged(&calls).await, Err(Down(2)));
    assert_eq!(
        heard("hedged"),
        ["sync: 2 attempts", "gave up on 2 (Attempts, 2 calls)"]
    );
}

#[retry(attempts = 2, base = "0ms", notify = log_retry)]
async fn send_check(calls: &AtomicU32) -> Result<(), Down> {
    Err(Down(calls.fetch_add(1, Ordering::SeqCst) + 1))
}

#[test]
fn an_async_fn_with_awaited_hooks_is_still_send() {
    fn is_send<T: Send>(_: &T) {}
    let calls = AtomicU32::new(0);
    let fut = send_check(&calls);
    is_send(&fut);
}

static DEADLINE_GAVE_UP: Mutex<Vec<(GiveUpReason, u32)>> = Mutex::new(Vec::new());

#[retry(
    attempts = 5,
    base = "100ms",
    jitter = none,
    max_elapsed = "250ms",
    notify = async |_: &Down, _: &RetryEvent| tokio::time::sleep(200 * MS).await,
    give_up = |_: &Down, g: &GiveUp| DEADLINE_GAVE_UP.lock().unwrap().push((g.reason, g.calls)),
)]
async fn slow_notify_past_deadline(calls: &AtomicU32) -> Result<(), Down> {
    Err(Down(calls.fetch_add(1, Ordering::SeqCst) + 1))
}

#[tokio::test(start_paused = true)]
async fn a_slow_awaited_notify_counts_toward_max_elapsed() {
    let calls = AtomicU32::new(0);
    let started = Instant::now();
    // The first attempt fails at 0; the 100 ms wait (it ends before 250 ms) is drawn, the
    // hook takes 200 ms, the wait is slept in full: at 300 ms, past the deadline, no second
    // attempt starts, and the error the hook was handed is returned.
    assert_eq!(slow_notify_past_deadline(&calls).await, Err(Down(1)));
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    assert_eq!(started.elapsed(), 300 * MS);
    assert_eq!(
        *DEADLINE_GAVE_UP.lock().unwrap(),
        [(GiveUpReason::Elapsed, 1)]
    );
}

/// Send, not Sync: an error a future may own across an `.await`, but not borrow.
#[derive(Debug)]
struct NotShared(std::cell::Cell<u32>);

#[test]
fn the_closure_api_s_async_hooks_keep_a_call_send_whose_error_is_not_sync() {
    use retry_jitter::hooks::HookFuture;
    use retry_jitter::{GiveUp, RetryEvent, RetryStats};
    fn is_send<T: Send>(_: &T) {}
    // The hooks' futures are boxed `Send`, made before they are awaited: the loop holds no
    // borrow of the error across their awaits, so a `Send` error that is not `Sync` will do.
    let r = retry_jitter::Retry::new(retry_jitter::Policy::new().with_attempts(3))
        .notify_async(|e: &NotShared, _: &RetryEvent| -> HookFuture<'_> {
            let n = e.0.get();
            Box::pin(async move { assert_eq!(n, 7) })
        })
        .give_up_async(|e: &NotShared, g: &GiveUp| -> HookFuture<'_> {
            let n = (e.0.get(), g.calls);
            Box::pin(async move { assert_eq!(n, (7, 3)) })
        })
        .stats_async(|s: &RetryStats| -> HookFuture<'_> {
            Box::pin(async move { assert_eq!(s.attempts, 3) })
        });
    let call = r.call_async(|| async { Err::<(), _>(NotShared(std::cell::Cell::new(7))) });
    is_send(&call);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    assert_eq!(rt.block_on(call).map_err(|e| e.0.get()), Err(7));
}

/// Neither Send nor Sync.
#[derive(Debug)]
struct Local(std::rc::Rc<u32>);

#[retry_jitter::retry(attempts = 3, base = "0ms")]
async fn local_error() -> Result<(), Local> {
    Err(Local(std::rc::Rc::new(1)))
}

#[test]
fn a_retried_async_fn_whose_error_is_not_send_is_still_send() {
    fn is_send<T: Send>(_: &T) {}
    // Nothing of the `Result` is held across an `.await` (no deadline, no cancel, no awaited
    // hook keeps the last outcome): the future is `Send` whatever the error is.
    is_send(&local_error());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .start_paused(true)
        .build()
        .unwrap();
    assert_eq!(rt.block_on(local_error()).map_err(|e| *e.0), Err(1));
}
