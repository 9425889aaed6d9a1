use retry_jitter::retry;

// A `?` inside a macro's arguments cannot be rewritten to end the attempt: with
// `#[track_caller]`, one error on the macro, saying to take the `?` out of it.
#[retry(attempts = 3)]
#[track_caller]
fn fetch(id: &str) -> Result<String, std::num::ParseIntError> {
    Ok(format!("id {}", id.parse::<u32>()?))
}

fn main() {
    let _ = fetch("1");
}
