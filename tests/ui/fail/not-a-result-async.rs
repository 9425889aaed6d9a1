use retry_jitter::retry;

// An `async fn` whose body uses `?` and `return`, as inline attempts rewrite them: still one
// error, at the return type.
#[retry(attempts = 3)]
async fn fetch(id: &str) -> Option<u32> {
    if id.is_empty() {
        return None;
    }
    let n: u32 = id.parse().ok()?;
    Some(n)
}

fn main() {
    let _ = fetch("1");
}
