use retry_jitter::retry;

// `on` says whether to retry: a `bool` or a `Decision`, not a number.
#[retry(on = |e: &String| e.len())]
fn fetch(id: u32) -> Result<u32, String> {
    Ok(id)
}

fn main() {
    let _ = fetch(1);
}
