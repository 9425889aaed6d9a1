use retry_jitter::retry;

struct Client {
    calls: u32,
    name: String,
}

impl Client {
    #[retry(base = "0ns")]
    fn name(&self) -> Result<&str, ()> {
        Ok(&self.name)
    }

    #[retry(base = "0ns")]
    fn bump(&mut self) -> Result<u32, u32> {
        self.calls += 1;
        if self.calls < 3 { Err(self.calls) } else { Ok(self.calls) }
    }

    #[retry(base = "0ns")]
    fn new(name: &str) -> Result<Self, String> {
        Ok(Client { calls: 0, name: name.to_owned() })
    }

    #[retry(base = "0ns")]
    async fn bump_async(&mut self) -> Result<u32, u32> {
        self.calls += 1;
        if self.calls < 5 { Err(self.calls) } else { Ok(self.calls) }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut c = Client::new("db").unwrap();
    assert_eq!(c.name(), Ok("db"));
    assert_eq!(c.bump(), Ok(3));
    assert_eq!(c.bump_async().await, Ok(5));
}
