use retry_jitter::retry;

#[retry(attempts = 3)]
fn fetch() -> Option<u32> {
    Some(1)
}

fn main() {
    let _ = fetch();
}
