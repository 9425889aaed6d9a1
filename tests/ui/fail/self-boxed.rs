use retry_jitter::retry;

struct Client(u32);

impl Client {
    #[retry]
    fn fetch(self: Box<Self>) -> Result<u32, String> {
        Ok(self.0)
    }
}

fn main() {
    let _ = Box::new(Client(1)).fetch();
}
