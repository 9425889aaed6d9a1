use retry_jitter::retry;

// A predicate for another `Ok` type: one error, at the key.
#[retry(on_ok = |s: &String| s.is_empty())]
async fn fetch(id: u32) -> Result<u32, String> {
    Ok(id)
}

fn main() {
    let _ = fetch(1);
}
