use retry_jitter::retry;

// A closure for the wrong error type, on an async fn: one error, at the key.
#[retry(on = |e: &std::io::Error| e.kind() == std::io::ErrorKind::TimedOut)]
async fn fetch(id: u32) -> Result<u32, String> {
    Ok(id)
}

fn main() {
    let _ = fetch(1);
}
