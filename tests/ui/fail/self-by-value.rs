use retry_jitter::retry;

struct Client;

impl Client {
    #[retry]
    fn fetch(self) -> Result<u32, String> {
        Ok(1)
    }
}

fn main() {
    let _ = Client.fetch();
}
