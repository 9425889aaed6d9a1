use retry_jitter::retry;

#[retry(on = |e| *e > 3)]
fn fetch() -> u32 {
    1
}

fn main() {
    let _ = fetch();
}
