use retry_jitter::retry;

#[retry(attempts = 4, base = "0ns")]
fn push(log: &mut Vec<u32>, value: u32) -> Result<usize, usize> {
    log.push(value);
    if log.len() < 3 { Err(log.len()) } else { Ok(log.len()) }
}

#[retry(attempts = 4, base = "0ns")]
async fn push_async(log: &mut Vec<u32>) -> Result<usize, usize> {
    log.push(0);
    if log.len() < 2 { Err(log.len()) } else { Ok(log.len()) }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut log = Vec::new();
    assert_eq!(push(&mut log, 7), Ok(3));
    assert_eq!(log, [7, 7, 7]);
    let mut log = Vec::new();
    assert_eq!(push_async(&mut log).await, Ok(2));
}
