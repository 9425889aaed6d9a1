use retry_jitter::retry;

#[derive(Debug)]
struct Unavailable;

// `?` on an error the function's error type has no `From` for: rustc's own message, at the `?`.
#[retry(attempts = 3)]
async fn fetch(id: &str) -> Result<u32, Unavailable> {
    let n: u32 = id.parse()?;
    Ok(n)
}

fn main() {
    let _ = fetch("1");
}
