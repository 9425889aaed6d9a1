use retry_jitter::retry;

#[retry]
const fn fetch() -> Result<u32, u32> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
