#![deny(warnings)]
// `#[track_caller]` on a sync fn works as without `#[retry]` (issue 11, point 9): the attempt
// is written in the function, so the caller's location reaches the body and the `From` of its
// `?`s. Each retried function has a twin without the attribute, and both record the same place.
use retry_jitter::{retry, RetryBudget};
use std::cell::Cell;
use std::panic::Location;

/// An error that records where it was made: the location `?` converts it at.
#[derive(Debug, PartialEq)]
struct Located {
    line: u32,
    column: u32,
}

impl Located {
    #[track_caller]
    fn here() -> Self {
        let at = Location::caller();
        Located {
            line: at.line(),
            column: at.column(),
        }
    }
}

impl From<std::num::ParseIntError> for Located {
    #[track_caller]
    fn from(_: std::num::ParseIntError) -> Self {
        Located::here()
    }
}

fn count(calls: &Cell<u32>) {
    calls.set(calls.get() + 1);
}

// Sync: the caller's location reaches the body, and the `?`'s conversion, as in the twin.
#[retry(attempts = 3, base = "0ns")]
#[track_caller]
fn tracked(s: &str, calls: &Cell<u32>) -> Result<(u32, u32), Located> {
    count(calls);
    let caller = Location::caller().line();
    if s.is_empty() {
        return Err(Located::here());
    }
    let n: u32 = s.parse()?;
    Ok((n, caller))
}

#[track_caller]
fn tracked_twin(s: &str, calls: &Cell<u32>) -> Result<(u32, u32), Located> {
    count(calls);
    let caller = Location::caller().line();
    if s.is_empty() {
        return Err(Located::here());
    }
    let n: u32 = s.parse()?;
    Ok((n, caller))
}

static BUDGET: RetryBudget = RetryBudget::new(100);

struct Service {
    calls: u32,
    limit: u32,
}

impl Service {
    // A method whose hooks borrow `self` while the body changes it, with a time budget and a
    // token budget: the whole loop, written in the function.
    #[retry(attempts = 4, base = "0ns", max_elapsed = "10s", budget = &BUDGET, on = |_e| self.limit > 0)]
    #[track_caller]
    fn call(&mut self) -> Result<u32, Located> {
        self.calls += 1;
        if self.calls < 3 {
            return Err(Located::here());
        }
        Ok(Location::caller().line())
    }
}

fn main() {
    let calls = Cell::new(0);
    let (got, line) = (tracked("7", &calls), line!());
    assert_eq!((got, calls.take()), (Ok((7, line)), 1));

    // An error made in the body, and one converted by `?`: at the caller's location, one line
    // apart as the calls are, in the same column.
    let a = tracked("", &calls).unwrap_err();
    let b = tracked_twin("", &calls).unwrap_err();
    assert_eq!(calls.take(), 3 + 1);
    assert_eq!((a.line + 1, a.column), (b.line, b.column));
    let a = tracked("x", &calls).unwrap_err();
    let b = tracked_twin("x", &calls).unwrap_err();
    assert_eq!(calls.take(), 3 + 1);
    assert_eq!((a.line + 1, a.column), (b.line, b.column));
    assert_eq!(b.line, line!() - 3);

    let mut service = Service { calls: 0, limit: 1 };
    let (got, line) = (service.call(), line!());
    assert_eq!((got, service.calls), (Ok(line), 3));
}
