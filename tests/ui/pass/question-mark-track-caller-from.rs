#![deny(warnings)]
// `?` in an `async fn`'s attempt converts its error where rustc's `?` would (issue 11, point 9):
// a `#[track_caller]` `From` records the user's `?`, not a line of the runtime. Each retried
// function has a twin without the attribute, written alike, and both record the same place.
use retry_jitter::retry;
use std::cell::Cell;
use std::panic::Location;

/// An error that records where it was made: the location `?` converts it at.
#[derive(Debug, PartialEq)]
struct Located {
    file: &'static str,
    line: u32,
    column: u32,
}

impl From<std::num::ParseIntError> for Located {
    #[track_caller]
    fn from(_: std::num::ParseIntError) -> Self {
        let at = Location::caller();
        Located {
            file: at.file(),
            line: at.line(),
            column: at.column(),
        }
    }
}

fn count(calls: &Cell<u32>) {
    calls.set(calls.get() + 1);
}

macro_rules! parse {
    ($s:expr) => {
        $s.parse::<u32>()
    };
}

// Inline: the `?` is rewritten to end the attempt.
#[retry(attempts = 2, base = "0ns")]
async fn inline(s: &str, calls: &Cell<u32>) -> Result<u32, Located> {
    count(calls);
    let n: u32 = s.parse()?;
    Ok(n)
}

async fn inline_twin(s: &str, calls: &Cell<u32>) -> Result<u32, Located> {
    count(calls);
    let n: u32 = s.parse()?;
    Ok(n)
}

// A `?` before a method call, in an expression.
#[retry(attempts = 2, base = "0ns")]
async fn chained(s: &str, calls: &Cell<u32>) -> Result<u32, Located> {
    count(calls);
    Ok(s.trim().parse::<u32>()?.max(1))
}

async fn chained_twin(s: &str, calls: &Cell<u32>) -> Result<u32, Located> {
    count(calls);
    Ok(s.trim().parse::<u32>()?.max(1))
}

// Nested (a macro of the user's): rustc's own `?`, in an `async` block.
#[retry(attempts = 2, base = "0ns")]
async fn nested(s: &str, calls: &Cell<u32>) -> Result<u32, Located> {
    count(calls);
    let n: u32 = parse!(s)?;
    Ok(n)
}

async fn nested_twin(s: &str, calls: &Cell<u32>) -> Result<u32, Located> {
    count(calls);
    let n: u32 = parse!(s)?;
    Ok(n)
}

/// Whether `got` and `twin` are the same place of a function and its twin, written
/// `lines_apart` lines below it.
fn same_place(got: Located, twin: Located, lines_apart: u32) {
    assert_eq!(got.file, file!());
    assert_eq!(
        (got.file, got.line + lines_apart, got.column),
        (twin.file, twin.line, twin.column)
    );
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let calls = Cell::new(0);
    let got = inline("x", &calls).await.unwrap_err();
    let twin = inline_twin("x", &calls).await.unwrap_err();
    assert_eq!(calls.take(), 2 + 1);
    same_place(got, twin, 6);

    let got = chained("x", &calls).await.unwrap_err();
    let twin = chained_twin("x", &calls).await.unwrap_err();
    assert_eq!(calls.take(), 2 + 1);
    same_place(got, twin, 5);

    let got = nested("x", &calls).await.unwrap_err();
    let twin = nested_twin("x", &calls).await.unwrap_err();
    assert_eq!(calls.take(), 2 + 1);
    same_place(got, twin, 6);

    assert_eq!(inline("7", &calls).await, Ok(7));
    assert_eq!(calls.take(), 1);
}
