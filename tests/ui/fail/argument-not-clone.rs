use retry_jitter::retry;

struct Request {
    id: u64,
}

#[retry]
fn send(request: Request) -> Result<u64, String> {
    Ok(request.id)
}

fn main() {
    let _ = send(Request { id: 1 });
}
