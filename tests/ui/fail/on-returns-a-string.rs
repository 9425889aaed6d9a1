use retry_jitter::retry;

// `on` says whether to retry: told that it returns `bool` or `Decision`, not that
// `Decision: From<String>` is not satisfied.
#[retry(on = |e: &String| e.clone())]
fn fetch(id: u32) -> Result<u32, String> {
    Ok(id)
}

fn main() {
    let _ = fetch(1);
}
