//! `give_up`: called once when retrying ends with an error, with the reason and the calls made.

use std::cell::RefCell;
use std::time::Duration;

use retry_jitter::{retry, testing, Decision, GiveUp, GiveUpReason, Policy, Retry, RetryBudget};

thread_local! {
    static SEEN: RefCell<Vec<(GiveUpReason, u32, &'static str, u32)>> = const { RefCell::new(Vec::new()) };
}

fn record(e: &u32, g: &GiveUp) {
    SEEN.with(|s| s.borrow_mut().push((g.reason, g.calls, g.function, *e)));
}

fn seen() -> Vec<(GiveUpReason, u32, &'static str, u32)> {
    SEEN.with(|s| s.borrow_mut().drain(..).collect())
}

#[retry(attempts = 3, base = "1ms", give_up = record)]
fn spent(code: u32) -> Result<(), u32> {
    Err(code)
}

#[retry(attempts = 100, base = "1s", max_elapsed = "3s", give_up = record)]
fn out_of_time(code: u32) -> Result<(), u32> {
    Err(code)
}

#[retry(on = |_| false, give_up = record)]
fn fatal(code: u32) -> Result<(), u32> {
    Err(code)
}

#[retry(cap = "5s", on = |_| Decision::RetryAfter(Duration::from_secs(60)), give_up = record)]
fn told_to_wait_too_long(code: u32) -> Result<(), u32> {
    Err(code)
}

static EMPTY: RetryBudget = RetryBudget::new(0);

#[retry(budget = &EMPTY, give_up = record)]
fn no_budget(code: u32) -> Result<(), u32> {
    Err(code)
}

#[retry(give_up = record)]
fn fine() -> Result<u32, u32> {
    Ok(1)
}

#[test]
fn each_reason_is_reported_once_with_the_calls_made_and_the_last_error() {
    let _ = testing::record_sleeps(|| spent(7));
    assert_eq!(seen(), [(GiveUpReason::Attempts, 3, "spent", 7)]);

    let _ = testing::record_sleeps(|| out_of_time(8));
    let s = seen();
    assert_eq!(s.len(), 1);
    assert_eq!(
        (s[0].0, s[0].2, s[0].3),
        (GiveUpReason::Elapsed, "out_of_time", 8)
    );
    assert!(s[0].1 >= 2 && s[0].1 < 100, "{} calls", s[0].1);

    let _ = testing::record_sleeps(|| fatal(9));
    assert_eq!(seen(), [(GiveUpReason::Stopped, 1, "fatal", 9)]);

    let _ = testing::record_sleeps(|| told_to_wait_too_long(10));
    assert_eq!(
        seen(),
        [(GiveUpReason::HintBeyondCap, 1, "told_to_wait_too_long", 10)]
    );

    let _ = testing::record_sleeps(|| no_budget(11));
    assert_eq!(seen(), [(GiveUpReason::BudgetEmpty, 1, "no_budget", 11)]);
}

#[test]
fn a_success_is_not_a_give_up() {
    assert_eq!(fine(), Ok(1));
    assert!(seen().is_empty());
}

#[test]
fn the_closure_api_reports_give_ups_too() {
    let got = RefCell::new(None);
    let policy = Policy::new().with_attempts(2).with_base(Duration::ZERO);
    let out = Retry::new(policy)
        .with_name("load")
        .give_up(|e: &&str, g: &GiveUp| {
            *got.borrow_mut() = Some((g.reason, g.calls, g.function, e.to_string()))
        })
        .call(|| Err::<(), _>("down"));
    assert_eq!(out, Err("down"));
    assert_eq!(
        got.into_inner(),
        Some((GiveUpReason::Attempts, 2, "load", "down".to_owned()))
    );
}
