use retry_jitter::retry;

struct Request(u64);

#[retry]
fn send(Request(id): Request) -> Result<u64, String> {
    Ok(id)
}

fn main() {
    let _ = send(Request(1));
}
