use retry_jitter::retry;

struct Conn {
    buf: Vec<u8>,
}

impl Conn {
    // Each attempt re-borrows `self`: a borrow of it cannot be returned.
    #[retry]
    async fn read(&mut self) -> Result<&[u8], String> {
        self.buf.push(1);
        Ok(&self.buf)
    }
}

fn main() {
    let mut conn = Conn { buf: Vec::new() };
    let _ = conn.read();
}
