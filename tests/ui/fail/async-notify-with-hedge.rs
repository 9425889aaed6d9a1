use retry_jitter::retry;

#[retry(hedge = "10ms", notify = async |e: &String, ev: &retry_jitter::RetryEvent| eprintln!("{e} {}", ev.attempt))]
async fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
