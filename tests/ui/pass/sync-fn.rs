use retry_jitter::retry;

#[retry(attempts = 3, base = "0ns")]
fn fetch(id: u64) -> Result<u64, String> {
    if id == 0 {
        return Err("zero".to_owned());
    }
    Ok(id * 2)
}

fn main() {
    assert_eq!(fetch(21), Ok(42));
    assert_eq!(fetch(0), Err("zero".to_owned()));
}
