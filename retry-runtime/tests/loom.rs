//! Every interleaving of concurrent takes and refunds on one `RetryBudget`, explored by loom:
//! no retry is granted that the tokens did not pay for, no token is lost or made up, and the
//! bucket never holds more than its capacity.
//!
//! `RUSTFLAGS="--cfg loom" cargo test -p retry-jitter-runtime --no-default-features --test loom --release`
#![cfg(loom)]

use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering::Relaxed;

use loom::sync::Arc;
use loom::thread;
use retry_jitter_runtime::RetryBudget;

#[test]
fn concurrent_takes_never_overdraw() {
    loom::model(|| {
        // 12 tokens at 5 a retry: two retries, whoever asks.
        let budget = Arc::new(RetryBudget::new(12));
        let threads: Vec<_> = (0..3)
            .map(|_| {
                let b = Arc::clone(&budget);
                thread::spawn(move || b.try_retry())
            })
            .collect();
        let granted = threads
            .into_iter()
            .map(|t| t.join().unwrap())
            .filter(|&g| g)
            .count();
        assert_eq!(granted, 2);
        assert_eq!(budget.available(), 2);
    });
}

#[test]
fn concurrent_refunds_and_rewards_lose_nothing_and_respect_the_capacity() {
    loom::model(|| {
        let budget = Arc::new(RetryBudget::new(10));
        assert!(budget.try_retry()); // 5 left
        let refund = {
            let b = Arc::clone(&budget);
            thread::spawn(move || b.succeeded_after(1)) // gives the 5 back
        };
        let take = {
            let b = Arc::clone(&budget);
            thread::spawn(move || b.try_retry())
        };
        let reward = {
            let b = Arc::clone(&budget);
            thread::spawn(move || b.succeeded_after(0)) // +1, capped at 10
        };
        refund.join().unwrap();
        reward.join().unwrap();
        let took = take.join().unwrap();
        // The take always succeeds (at least 5 tokens are there whenever it runs); what is left
        // is 10 - 5 (taken) + 1 (reward), unless the reward arrived while the bucket was full.
        assert!(took);
        let left = budget.available();
        assert!(left == 5 || left == 6, "{left} tokens left");
        assert!(left <= budget.capacity());
    });
}

/// `f` on `budget`, in a loom thread of its own.
fn spawn<T, F>(budget: &Arc<RetryBudget>, f: F) -> thread::JoinHandle<T>
where
    T: Send + 'static,
    F: FnOnce(&RetryBudget) -> T + Send + 'static,
{
    let b = Arc::clone(budget);
    thread::spawn(move || f(&b))
}

/// A retry that took its tokens and then never ran (its future dropped during the wait): it
/// gives them back. Returns whether it took them.
fn cancelled_retry(b: &RetryBudget) -> bool {
    let took = b.try_retry();
    if took {
        b.refund_retry();
    }
    took
}

// In the models below the main thread plays one part itself: two spawned threads, not three,
// keep loom's search to seconds.

/// A: a retry is cancelled (takes, then refunds). B: another call's retry takes. Main: a
/// first-try success gives back its reward.
#[test]
fn a_cancelled_retry_races_a_take_and_a_reward() {
    // Seen across the executions: each take is refused in some, so the race is real.
    static A_REFUSED: AtomicBool = AtomicBool::new(false);
    static B_REFUSED: AtomicBool = AtomicBool::new(false);
    static B_GRANTED_AFTER_REFUND: AtomicBool = AtomicBool::new(false);
    loom::model(|| {
        // 10 tokens, a retry in flight elsewhere: 5 left, one retry's worth.
        let budget = Arc::new(RetryBudget::new(10));
        assert!(budget.try_retry());
        let cancelled = spawn(&budget, cancelled_retry);
        let take = spawn(&budget, RetryBudget::try_retry);
        budget.succeeded_after(0);
        let a = cancelled.join().unwrap();
        let b = take.join().unwrap();
        let left = budget.available();
        // At most 6 tokens are ever there, so the capacity never clips anything: A's take and
        // refund are net zero, the reward is +1, and B's take is -5 exactly when granted.
        assert_eq!(
            left,
            6 - 5 * u32::from(b),
            "A {a}, B {b}: {left} tokens left"
        );
        // A take is refused only while the other one holds the 5 tokens (the reward alone
        // never makes 5): never both.
        assert!(a || b, "both takes refused with {left} tokens left");
        A_REFUSED.fetch_or(!a, Relaxed);
        B_REFUSED.fetch_or(!b, Relaxed);
        B_GRANTED_AFTER_REFUND.fetch_or(a && b, Relaxed);
    });
    assert!(A_REFUSED.load(Relaxed));
    assert!(B_REFUSED.load(Relaxed));
    assert!(B_GRANTED_AFTER_REFUND.load(Relaxed));
}

/// Tokens for one retry only: A takes them and gives them back (a cancelled retry) while B and
/// C (the main thread) each try to take them; a take refused while A holds them can be followed by
/// one granted on A's refund.
#[test]
fn a_refund_makes_a_scarce_retry_possible() {
    static TAKE_MADE_POSSIBLE_BY_REFUND: AtomicBool = AtomicBool::new(false);
    static BOTH_REFUSED: AtomicBool = AtomicBool::new(false);
    loom::model(|| {
        // 10 tokens, a retry in flight elsewhere (never given back here): 5 left.
        let budget = Arc::new(RetryBudget::new(10));
        assert!(budget.try_retry());
        let cancelled = spawn(&budget, cancelled_retry);
        let take = spawn(&budget, RetryBudget::try_retry);
        let c = budget.try_retry();
        let a = cancelled.join().unwrap();
        let b = take.join().unwrap();
        let left = budget.available();
        // Conservation: the tokens of the granted takes not refunded (the retry elsewhere, B's,
        // C's) plus those in the bucket make the capacity; no reward, and nothing is clipped.
        let held = 1 + u32::from(b) + u32::from(c);
        assert_eq!(
            held * budget.retry_cost() + left,
            budget.capacity(),
            "A {a}, B {b}, C {c}: {left} tokens left"
        );
        // Hence at most one of B and C is granted. A take is refused only while another holds
        // the 5 tokens, and A gives them back: someone is granted.
        assert!(a || b || c);
        TAKE_MADE_POSSIBLE_BY_REFUND.fetch_or(a && (b || c), Relaxed);
        BOTH_REFUSED.fetch_or(!b && !c, Relaxed);
    });
    // In some execution A took first and its refund then let B or C take (they cannot take
    // before A: A would be refused); in another, both came while A held the tokens.
    assert!(TAKE_MADE_POSSIBLE_BY_REFUND.load(Relaxed));
    assert!(BOTH_REFUSED.load(Relaxed));
}

/// Refunds and rewards that together overfill the bucket: A's cancelled retry gives its tokens
/// back while C's call, which took a retry earlier, succeeds and gives them back, and the main
/// thread's first-try success gives its reward. Every token comes back, and the capacity clips
/// the surplus whichever give-back comes last: the refund included.
#[test]
fn refunds_and_rewards_fill_the_bucket_to_the_capacity_and_no_further() {
    static REFUND_CLIPPED: AtomicBool = AtomicBool::new(false);
    loom::model(|| {
        // 10 tokens, 5 taken by C's retry: 5 left.
        let budget = Arc::new(RetryBudget::new(10));
        assert!(budget.try_retry());
        let cancelled = spawn(&budget, |b| {
            let took = b.try_retry();
            // What the refund lands on: 6 when both give-backs came in since the take.
            let before = b.available();
            b.refund_retry();
            (took, before)
        });
        let success = spawn(&budget, |b| b.succeeded_after(1));
        budget.succeeded_after(0);
        let (a, before_refund) = cancelled.join().unwrap();
        success.join().unwrap();
        // Only A takes, from at least 5 tokens.
        assert!(a);
        // 5 + 1 + 5 = 11 in all, clipped at 10: never less (a give-back lost), never more (the
        // last one, refund or not, not clipped: nothing takes afterwards to hide it).
        assert_eq!(budget.available(), budget.capacity());
        REFUND_CLIPPED.fetch_or(
            before_refund + budget.retry_cost() > budget.capacity(),
            Relaxed,
        );
    });
    // In some execution the refund came last, onto 6 tokens, and had to be clipped.
    assert!(REFUND_CLIPPED.load(Relaxed));
}

/// A clock that never moves, for the `RatioBudget` models: every operation in one slot.
fn frozen() -> std::time::Instant {
    static AT: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    *AT.get_or_init(std::time::Instant::now)
}

/// `RatioBudget`: two calls begin while another thread asks for a retry. 50% of two calls is
/// one retry: granted when both calls came first, refused when none did, never more, and the
/// retry held plus those left always make the calls' share.
#[test]
fn ratio_budget_grants_its_share_of_concurrent_calls_and_no_more() {
    use retry_jitter_runtime::RatioBudget;
    static ONE_GRANTED: AtomicBool = AtomicBool::new(false);
    static NONE_GRANTED: AtomicBool = AtomicBool::new(false);
    loom::model(|| {
        let budget = Arc::new(RatioBudget::new(0.5, 0, std::time::Duration::from_secs(10)));
        let calls = {
            let b = Arc::clone(&budget);
            thread::spawn(move || {
                b.begin(frozen);
                b.begin(frozen);
            })
        };
        let held = u32::from(budget.try_retry(frozen));
        calls.join().unwrap();
        assert_eq!(held + budget.available(frozen), 1);
        ONE_GRANTED.fetch_or(held == 1, Relaxed);
        NONE_GRANTED.fetch_or(held == 0, Relaxed);
    });
    assert!(ONE_GRANTED.load(Relaxed));
    assert!(NONE_GRANTED.load(Relaxed));
}

/// `RatioBudget`: a cancelled retry (take, then refund) races another take over the floor's
/// one retry: never both held, and none lost.
#[test]
fn ratio_budget_refunds_race_takes_and_lose_nothing() {
    use retry_jitter_runtime::RatioBudget;
    static TAKE_AFTER_REFUND: AtomicBool = AtomicBool::new(false);
    loom::model(|| {
        // The floor alone: 1 a second over 1 s.
        let budget = Arc::new(RatioBudget::new(0.0, 1, std::time::Duration::from_secs(1)));
        let cancelled = {
            let b = Arc::clone(&budget);
            thread::spawn(move || match b.take_retry(frozen) {
                Some(ticket) => {
                    b.refund(ticket);
                    true
                }
                None => false,
            })
        };
        let take = budget.try_retry(frozen);
        let a = cancelled.join().unwrap();
        assert!(a || take, "both refused the one retry");
        assert_eq!(u32::from(take) + budget.available(frozen), 1);
        TAKE_AFTER_REFUND.fetch_or(a && take, Relaxed);
    });
    assert!(TAKE_AFTER_REFUND.load(Relaxed));
}

/// Where the moving clock of the refund models stands, in milliseconds after `frozen()`.
static AT_MS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// `frozen()` moved on by `AT_MS`: set between the steps of a model, never while its threads
/// run (loom does not see it).
fn moving() -> std::time::Instant {
    frozen() + std::time::Duration::from_millis(AT_MS.load(Relaxed))
}

/// 16.5 s after `frozen()`: a thread whose clock reading is past the others'.
fn late() -> std::time::Instant {
    frozen() + std::time::Duration::from_millis(16_500)
}

/// `RatioBudget`'s refund rule: a retry taken at t = 0 and given back once its slot has left
/// the window (or while a take empties that slot) gives nothing back, so the retries taken
/// at t = 8 s keep the window at its ratio: a take at t = 16.5 s is refused in every
/// interleaving, and nothing is left.
#[test]
fn ratio_budget_drops_a_refund_whose_slot_left_the_window() {
    use retry_jitter_runtime::RatioBudget;
    static REFUND_FIRST: AtomicBool = AtomicBool::new(false);
    static REFUND_LATE: AtomicBool = AtomicBool::new(false);
    for late_refund in [false, true] {
        loom::model(move || {
            // Ratio 1, no floor, 1 s slots.
            let budget = Arc::new(RatioBudget::new(1.0, 0, std::time::Duration::from_secs(16)));
            AT_MS.store(0, Relaxed);
            budget.begin(moving);
            let held = budget
                .take_retry(moving)
                .expect("one call pays for one retry");
            AT_MS.store(8_000, Relaxed);
            budget.begin(moving);
            assert!(budget.take_retry(moving).is_some());
            if late_refund {
                // The clock has moved past t = 0's slot before the refund: it must be dropped.
                AT_MS.store(16_500, Relaxed);
                assert_eq!(budget.available(moving), 0);
            }
            let refund = {
                let b = Arc::clone(&budget);
                thread::spawn(move || b.refund(held))
            };
            // Concurrently, a take at t = 16.5 s (which empties t = 0's slot).
            let took = budget.take_retry(late);
            refund.join().unwrap();
            assert!(took.is_none(), "a retry over the ratio was granted");
            assert_eq!(budget.available(late), 0);
            if late_refund {
                REFUND_LATE.store(true, Relaxed);
            } else {
                REFUND_FIRST.store(true, Relaxed);
            }
        });
    }
    assert!(REFUND_FIRST.load(Relaxed) && REFUND_LATE.load(Relaxed));
}
