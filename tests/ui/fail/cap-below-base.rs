use retry_jitter::retry;

#[retry(base = "2s", cap = "500ms")]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
