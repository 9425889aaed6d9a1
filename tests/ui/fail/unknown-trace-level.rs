use retry_jitter::retry;

#[retry(trace_level = loud)]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
