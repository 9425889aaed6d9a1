use retry_jitter::retry;

#[retry(hedge = "p100")]
async fn lookup(id: u64) -> Result<u64, String> {
    Ok(id)
}

fn main() {
    let _ = lookup(1);
}
