use retry_jitter::retry;

// A `continue` outside the body's own loops is the error it is without `#[retry]`: it must not
// start the next attempt of the retry loop the attribute writes.
#[retry(attempts = 3)]
async fn fetch(id: u32) -> Result<u32, String> {
    if id == 0 {
        continue;
    }
    Ok(id)
}

fn main() {
    let _ = fetch(1);
}
