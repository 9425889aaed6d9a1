use retry_jitter::retry;

#[retry(attempts = 3, base = "1ms")]
async fn fetch(id: &str) -> Result<usize, std::num::ParseIntError> {
    let n: usize = id.parse()?;
    Ok(n + 1)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    assert_eq!(fetch("41").await, Ok(42));
    assert!(fetch("x").await.is_err());
}
