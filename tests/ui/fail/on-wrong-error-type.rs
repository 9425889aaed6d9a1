use retry_jitter::retry;

fn is_transient(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::TimedOut
}

#[retry(on = is_transient)]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
