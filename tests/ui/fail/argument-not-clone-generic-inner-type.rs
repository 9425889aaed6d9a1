use retry_jitter::retry;

// Issue 17, class 5: `Vec<B>` is `Clone` only if `B` is, and this `B` is not required to be;
// the message is the argument's, on the argument.
#[retry]
async fn send<B>(parts: Vec<B>) -> Result<usize, String> {
    Ok(parts.len())
}

fn main() {
    let _ = send(vec![1u8]);
}
