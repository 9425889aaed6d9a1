use retry_jitter::retry;

// A plain value: one error at the return type, with nothing of the crate's insides after it.
#[retry(attempts = 3)]
fn fetch() -> u32 {
    1
}

fn main() {
    let _ = fetch();
}
