#![deny(warnings)]
// Issue 17, class 8 (a regression): an attempt written inline may return a shared borrow of one
// field of `&mut self` while the body changes another, as without `#[retry]`: rustc accepts the
// loop, so the macro does not refuse it. Likewise a shared borrow of a `&mut` argument's field.
use retry_jitter::retry;

struct Entry {
    name: String,
    calls: u32,
}

macro_rules! fail_before {
    ($calls:expr, $n:expr) => {
        if $calls < $n {
            return Err($calls);
        }
    };
}

impl Entry {
    #[retry(attempts = 3, base = "0ns")]
    async fn name(&mut self) -> Result<&str, u32> {
        tokio::task::yield_now().await;
        self.calls += 1;
        if self.calls < 3 {
            return Err(self.calls);
        }
        Ok(&self.name)
    }

    // A macro of the user's: the attempt is a nested `async` block.
    #[retry(attempts = 3, base = "0ns")]
    async fn name_nested(&mut self) -> Result<&str, u32> {
        self.calls += 1;
        fail_before!(self.calls, 6);
        Ok(&self.name)
    }

    // `#[track_caller]`: a sync fn's attempt written inline too.
    #[retry(attempts = 3, base = "0ns")]
    #[track_caller]
    fn name_sync(&mut self) -> Result<&str, u32> {
        self.calls += 1;
        if self.calls < 9 {
            return Err(self.calls);
        }
        Ok(self.name.as_str())
    }
}

#[retry(attempts = 3, base = "0ns")]
async fn name_of(entry: &mut Entry) -> Result<&str, u32> {
    entry.calls += 1;
    if entry.calls < 12 {
        return Err(entry.calls);
    }
    Ok(&entry.name)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut entry = Entry { name: "a".to_owned(), calls: 0 };
    assert_eq!(entry.name().await, Ok("a"));
    assert_eq!(entry.name_nested().await, Ok("a"));
    assert_eq!(entry.name_sync(), Ok("a"));
    assert_eq!(name_of(&mut entry).await, Ok("a"));
    assert_eq!(entry.calls, 12);
}
