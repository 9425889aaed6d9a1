use axum::extract::Path;
use retry_jitter::retry;

// An axum handler: its extractors are arguments like any other, cloned for each attempt.
#[retry(attempts = 3)]
async fn get_user(Path(id): Path<u32>) -> Result<String, String> {
    Ok(format!("user {id}"))
}

fn main() {
    let _ = get_user(Path(1));
}
