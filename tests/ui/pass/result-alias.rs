use retry_jitter::retry;
use std::io;

type MyResult<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

#[retry(base = "0ns", on = |e| e.kind() == io::ErrorKind::Interrupted)]
fn read() -> io::Result<u8> {
    Ok(1)
}

#[retry(base = "0ns")]
fn parse(s: &str) -> MyResult<u32> {
    Ok(s.parse::<u32>()?)
}

fn main() {
    assert_eq!(read().unwrap(), 1);
    assert_eq!(parse("3").unwrap(), 3);
}
