use retry_jitter::retry;

// `?` on an `Option` in a function that returns a `Result`: an error, at the `?`, that says
// what to write instead.
#[retry(attempts = 3)]
async fn first(ids: &[u32]) -> Result<u32, String> {
    let id = ids.first()?;
    Ok(*id)
}

fn main() {
    let _ = first(&[1]);
}
