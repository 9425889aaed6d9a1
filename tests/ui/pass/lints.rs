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

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut seen = Vec::new();
    assert_eq!(fetch(1, "a".to_owned(), &mut seen), Ok(1));
    assert_eq!(fetch_async(&2).await, Ok(2));
}
