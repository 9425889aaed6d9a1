use retry_jitter::retry;

// An `Option`: pointed to `on_ok` (retry a `None`) or `.ok_or(..)` (make it an error).
#[retry(attempts = 3)]
async fn find(name: &str) -> Option<String> {
    Some(name.to_owned())
}

fn main() {
    let _ = find("a");
}
