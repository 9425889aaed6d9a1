use retry_jitter::retry;

// A `break` outside the body's own loops (here with the value rustc's suggestion for a bare
// `break` would add) is the error it is without `#[retry]`: it must not end the retry loop.
#[retry(attempts = 3)]
async fn fetch(id: u32) -> Result<u32, String> {
    for _ in 0..id {
        break;
    }
    if id == 0 {
        break Ok(0);
    }
    Ok(id)
}

fn main() {
    let _ = fetch(1);
}
