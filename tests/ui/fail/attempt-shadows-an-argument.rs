use retry_jitter::retry;

// `attempt = n` would hide the argument `n` from the body: one error, at the key.
#[retry(attempt = n)]
fn fetch(n: u32) -> Result<u32, String> {
    Ok(n)
}

fn main() {
    let _ = fetch(1);
}
