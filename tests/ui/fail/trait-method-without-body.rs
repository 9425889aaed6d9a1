use retry_jitter::retry;

trait Client {
    #[retry]
    fn fetch(&self) -> Result<u32, String>;
}

struct C;

impl Client for C {
    fn fetch(&self) -> Result<u32, String> {
        Ok(1)
    }
}

fn main() {
    let _ = C.fetch();
}
