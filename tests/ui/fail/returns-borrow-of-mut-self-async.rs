use retry_jitter::retry;

struct Conn {
    buf: Vec<u8>,
}

impl Conn {
    // Each attempt takes its own `&mut` of `self.buf`: no loop can return one of them, since
    // the borrow checker cannot see that the attempt which returns is the last. (A shared
    // borrow is rustc's to judge: tests/ui/pass/returns-shared-borrow-of-mut-self.rs.)
    #[retry]
    async fn read(&mut self) -> Result<&mut Vec<u8>, String> {
        self.buf.push(1);
        Ok(&mut self.buf)
    }
}

fn main() {
    let mut conn = Conn { buf: Vec::new() };
    let _ = conn.read();
}
