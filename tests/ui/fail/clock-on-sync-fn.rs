use retry_jitter::retry;

fn my_clock() -> std::time::Instant {
    std::time::Instant::now()
}

#[retry(clock = my_clock)]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
