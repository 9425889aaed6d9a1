use retry_jitter::retry;

#[retry(attempts = 3, base = "1ms")]
async fn fetch(id: &str) -> Result<usize, std::num::ParseIntError> {
    let n: usize = id.parse()?;
    Ok(n + 1)
}

// An opaque type in the outcome, with `return` and `?` in the body.
#[retry(attempts = 2, base = "1ms")]
async fn shown(x: &str) -> Result<impl std::fmt::Display, std::num::ParseIntError> {
    if x.is_empty() {
        return Ok(0);
    }
    Ok(x.parse::<u32>()? + 1)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    assert_eq!(fetch("41").await, Ok(42));
    assert!(fetch("x").await.is_err());
    assert_eq!(shown("1").await.map(|s| s.to_string()), Ok("2".to_owned()));
    assert_eq!(shown("").await.map(|s| s.to_string()), Ok("0".to_owned()));
}
