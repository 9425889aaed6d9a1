#![deny(warnings, unused_qualifications, unused_results, unreachable_pub)]

use retry_jitter::retry;

#[retry(base = "0ns", on = |e| *e > 0)]
fn fetch(id: u32, name: String, seen: &mut Vec<u32>) -> Result<u32, u32> {
    seen.push(id);
    if name.is_empty() {
        return Err(0);
    }
    Ok(id)
}

#[retry(base = "0ns")]
async fn fetch_async(id: &u32) -> Result<u32, u32> {
    Ok(*id)
}

// An attempt written inline: `return`, `?` (converted by `From`), `?` before a method call.
#[retry(base = "0ns")]
async fn fetch_inline(id: &str) -> Result<usize, std::num::ParseIntError> {
    if id.is_empty() {
        return Ok(0);
    }
    let n: u8 = id.parse()?;
    Ok(id.parse::<usize>()?.max(usize::from(n)))
}

// A body that never returns: what follows it in the loop is unreachable, and no warning says so.
#[retry(base = "0ns")]
async fn unfinished(id: &u32) -> Result<u32, u32> {
    let _ = id;
    todo!()
}

// Receivers each attempt has its own copy of: `mut` moves off the signature, `self` is renamed.
#[derive(Clone)]
struct Counter(u32);

impl Counter {
    #[retry(base = "0ns")]
    fn bump(mut self) -> Result<u32, u32> {
        self.0 += 1;
        Ok(self.0)
    }

    #[retry(base = "0ns")]
    async fn shared(self: std::sync::Arc<Self>) -> Result<u32, u32> {
        Ok(self.0)
    }

    #[retry(base = "0ns")]
    fn pinned(self: std::pin::Pin<&mut Self>) -> Result<u32, u32> {
        Ok(self.get_mut().0)
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    assert_eq!(fetch_inline("7").await, Ok(7));
    assert_eq!(fetch_inline("").await, Ok(0));
    let _ = unfinished;
    let mut seen = Vec::new();
    assert_eq!(fetch(1, "a".to_owned(), &mut seen), Ok(1));
    assert_eq!(fetch_async(&2).await, Ok(2));
    let mut counter = Counter(1);
    assert_eq!(counter.clone().bump(), Ok(2));
    assert_eq!(std::sync::Arc::new(counter.clone()).shared().await, Ok(1));
    assert_eq!(std::pin::Pin::new(&mut counter).pinned(), Ok(1));
}
