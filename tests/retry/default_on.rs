//! The default `on`: with no `on` key, an error type that implements `Transient` is classified
//! by it, and one that does not is retried on every error. Chosen at compile time, with no bound
//! on the error type. The closure API cannot choose (its `call` is generic in `E`): it retries
//! every error unless told `.on(retry_jitter::transient)`.

use std::cell::Cell;
use std::io;

use retry_jitter::{retry, testing, Decision, Policy, Retry, Transient};

thread_local! {
    static CALLS: Cell<u32> = const { Cell::new(0) };
}

fn call() -> u32 {
    CALLS.with(|c| {
        c.set(c.get() + 1);
        c.get()
    })
}

fn calls_of<T>(f: impl FnOnce() -> T) -> (T, u32) {
    CALLS.with(|c| c.set(0));
    let (out, _waits) = testing::record_sleeps(f);
    (out, CALLS.with(Cell::get))
}

#[retry(attempts = 3)]
fn fails_with(kind: io::ErrorKind) -> io::Result<()> {
    call();
    Err(kind.into())
}

#[test]
fn an_io_not_found_is_tried_once() {
    let (out, calls) = calls_of(|| fails_with(io::ErrorKind::NotFound));
    assert_eq!(out.unwrap_err().kind(), io::ErrorKind::NotFound);
    assert_eq!(calls, 1);
}

#[test]
fn an_io_connection_refused_is_retried() {
    let (out, calls) = calls_of(|| fails_with(io::ErrorKind::ConnectionRefused));
    assert_eq!(out.unwrap_err().kind(), io::ErrorKind::ConnectionRefused);
    assert_eq!(calls, 3);
}

/// An error type without `Transient`.
#[derive(Debug, PartialEq)]
struct Opaque;

#[retry(attempts = 3)]
fn fails_opaquely() -> Result<(), Opaque> {
    call();
    Err(Opaque)
}

#[test]
fn an_error_type_without_transient_is_retried_on_every_error() {
    let (out, calls) = calls_of(fails_opaquely);
    assert_eq!(out, Err(Opaque));
    assert_eq!(calls, 3);
}

/// A type of the user's own that implements `Transient`.
#[derive(Debug, PartialEq)]
enum Db {
    Deadlock,
    Constraint,
}

impl Transient for Db {
    fn decision(&self) -> Decision {
        match self {
            Db::Deadlock => Decision::Retry,
            Db::Constraint => Decision::Stop,
        }
    }
}

#[retry(attempts = 3)]
fn fails_in_db(e: fn() -> Db) -> Result<(), Db> {
    call();
    Err(e())
}

#[test]
fn a_transient_type_of_ones_own_is_classified_by_it() {
    assert_eq!(calls_of(|| fails_in_db(|| Db::Constraint)).1, 1);
    assert_eq!(calls_of(|| fails_in_db(|| Db::Deadlock)).1, 3);
}

/// A generic error type is not known to be `Transient` where the function is written: every
/// error is retried, as without the attribute's choice, and nothing is asked of `E`.
#[retry(attempts = 3)]
fn fails_generically<E>(e: fn() -> E) -> Result<(), E> {
    call();
    Err(e())
}

#[test]
fn a_generic_error_type_is_retried_on_every_error() {
    let (out, calls) = calls_of(|| fails_generically(|| io::Error::from(io::ErrorKind::NotFound)));
    assert_eq!(out.unwrap_err().kind(), io::ErrorKind::NotFound);
    assert_eq!(calls, 3);
}

#[retry(attempts = 3)]
async fn fails_async(kind: io::ErrorKind) -> io::Result<()> {
    call();
    Err(kind.into())
}

#[tokio::test(start_paused = true)]
async fn an_async_fn_chooses_the_same_way() {
    CALLS.with(|c| c.set(0));
    let _ = fails_async(io::ErrorKind::NotFound).await;
    assert_eq!(CALLS.with(Cell::get), 1);
    CALLS.with(|c| c.set(0));
    let _ = fails_async(io::ErrorKind::ConnectionRefused).await;
    assert_eq!(CALLS.with(Cell::get), 3);
}

#[test]
fn an_explicit_on_still_wins() {
    #[retry(attempts = 3, on = |_| true)]
    fn retried_anyway() -> io::Result<()> {
        call();
        Err(io::ErrorKind::NotFound.into())
    }
    assert_eq!(calls_of(retried_anyway).1, 3);
}

#[test]
fn the_closure_api_retries_every_error_unless_told_transient() {
    let policy = Policy::new().with_attempts(3);
    let not_found = || {
        call();
        Err::<(), _>(io::Error::from(io::ErrorKind::NotFound))
    };
    assert_eq!(calls_of(|| Retry::new(policy).call(not_found)).1, 3);
    let classified = calls_of(|| {
        Retry::new(policy)
            .on(retry_jitter::transient)
            .call(not_found)
    });
    assert_eq!(classified.1, 1);
}

/// An `impl Trait` in the `Ok` type leaves the choice to the error type.
#[retry(attempts = 3)]
fn opaque_value(kind: io::ErrorKind) -> io::Result<impl std::fmt::Display> {
    call();
    Err::<u32, _>(kind.into())
}

#[test]
fn an_impl_trait_value_does_not_hide_the_error_type() {
    assert_eq!(
        calls_of(|| opaque_value(io::ErrorKind::NotFound).map(|_| ())).1,
        1
    );
    assert_eq!(
        calls_of(|| opaque_value(io::ErrorKind::TimedOut).map(|_| ())).1,
        3
    );
}
