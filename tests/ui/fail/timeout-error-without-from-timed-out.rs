use retry_jitter::retry;

#[derive(Debug)]
enum ApiError {
    Unavailable,
}

#[retry(timeout = "2s")]
async fn fetch(id: u64) -> Result<u64, ApiError> {
    if id == 0 { Err(ApiError::Unavailable) } else { Ok(id) }
}

fn main() {
    let _ = fetch(1);
}
