use retry_jitter::retry;

#[retry(stats = async |s: &String| eprintln!("{s}"))]
async fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
