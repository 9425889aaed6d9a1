use retry_jitter::retry;

trait Store {
    fn load_once(&self) -> Result<u32, String>;

    #[retry(base = "0ns")]
    async fn load(&self) -> Result<u32, String> {
        self.load_once()
    }
}

struct Mem(u32);

impl Store for Mem {
    #[retry(attempts = 2, base = "0ns")]
    fn load_once(&self) -> Result<u32, String> {
        Ok(self.0)
    }

    #[retry(attempts = 2, base = "0ns")]
    async fn load(&self) -> Result<u32, String> {
        Ok(self.0 + 1)
    }
}

struct Default0;

impl Store for Default0 {
    fn load_once(&self) -> Result<u32, String> {
        Ok(7)
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    assert_eq!(Mem(1).load().await, Ok(2));
    assert_eq!(Default0.load().await, Ok(7));
}
