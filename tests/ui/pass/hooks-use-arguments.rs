#![deny(warnings)]
// Key expressions may use `self` and the arguments, in sync functions as in async ones: the
// hooks borrow them while the attempts use them.
use retry_jitter::{retry, RetryEvent};
use std::cell::RefCell;

thread_local! {
    static LOG: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

fn log(line: String) {
    LOG.with(|l| l.borrow_mut().push(line));
}

fn logged() -> Vec<String> {
    LOG.with(|l| l.take())
}

struct Limiter {
    limit: u32,
    calls: u32,
}

impl Limiter {
    // The classifier reads `self` while the body changes it.
    #[retry(attempts = 5, base = "0ns", on = |_e| self.limit > 0)]
    fn bump(&mut self) -> Result<u32, u32> {
        self.calls += 1;
        if self.calls < 3 { Err(self.calls) } else { Ok(self.calls) }
    }

    #[retry(attempts = 5, base = "0ns", on = |_e| self.limit > 0)]
    async fn bump_async(&mut self) -> Result<u32, u32> {
        self.calls += 1;
        if self.calls < 6 { Err(self.calls) } else { Ok(self.calls) }
    }
}

// The notifier uses a by-value argument the body is given a clone of.
#[retry(attempts = 3, base = "0ns", notify = |e: &u32, ev: &RetryEvent| log(format!("{tag}: {e} #{}", ev.attempt)))]
fn tagged(tag: String, fail: u32) -> Result<usize, u32> {
    if LOG.with(|l| l.borrow().len()) < fail as usize { Err(fail) } else { Ok(tag.len()) }
}

#[retry(attempts = 3, base = "0ns", give_up = |e: &u32, _| log(format!("{} gave up: {e}", tag)))]
async fn tagged_async(tag: String) -> Result<usize, u32> {
    Err(tag.len() as u32)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut limiter = Limiter { limit: 1, calls: 0 };
    assert_eq!(limiter.bump(), Ok(3));
    assert_eq!(limiter.bump_async().await, Ok(6));
    let mut stopped = Limiter { limit: 0, calls: 0 };
    assert_eq!(stopped.bump(), Err(1));

    assert_eq!(tagged("db".to_owned(), 2), Ok(2));
    assert_eq!(logged(), ["db: 2 #1", "db: 2 #2"]);
    assert_eq!(tagged_async("cache".to_owned()).await, Err(5));
    assert_eq!(logged(), ["cache gave up: 5"]);
}
