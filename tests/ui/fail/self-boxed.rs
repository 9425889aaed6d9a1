use retry_jitter::retry;

struct Client;

impl Client {
    #[retry]
    fn fetch(self: Box<Self>) -> Result<u32, String> {
        Ok(1)
    }
}

fn main() {
    let _ = Box::new(Client).fetch();
}
