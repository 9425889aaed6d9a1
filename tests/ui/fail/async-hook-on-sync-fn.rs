use retry_jitter::retry;

#[retry(give_up = async |e: &String, g: &retry_jitter::GiveUp| eprintln!("{e}: {}", g.reason))]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
