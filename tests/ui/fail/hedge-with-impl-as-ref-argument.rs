use retry_jitter::retry;
use std::path::Path;

// Issue 17, class 10: an `impl AsRef<Path>` is lent to each attempt, which a hedged attempt,
// a future of its own, cannot hold: the error says what to write.
#[retry(hedge = "50ms")]
async fn read(path: impl AsRef<Path>) -> Result<usize, String> {
    Ok(path.as_ref().as_os_str().len())
}

fn main() {
    let _ = read("/a");
}
