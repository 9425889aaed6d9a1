use retry_jitter::retry;

#[retry(cap = "500ms", rate_limited_base = "1s")]
fn fetch() -> Result<u32, std::io::Error> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
