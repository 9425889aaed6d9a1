use retry_jitter::retry;

#[retry(crate = retry_jitter)]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
