use retry_jitter::retry;

struct Body;

// Issue 17, class 5: `Option<Body>` is not `Clone` because `Body` is not; the message is the
// argument's, on the argument.
#[retry]
fn send(body: Option<Body>) -> Result<bool, String> {
    Ok(body.is_some())
}

fn main() {
    let _ = send(None);
}
