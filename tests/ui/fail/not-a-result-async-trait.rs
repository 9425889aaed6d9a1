use async_trait::async_trait;
use retry_jitter::retry;

#[async_trait]
trait Store {
    async fn load(&self) -> u32;
}

struct Mem;

// Under `#[async_trait]` the function returns a boxed future: the error is about its output.
#[async_trait]
impl Store for Mem {
    #[retry]
    async fn load(&self) -> u32 {
        1
    }
}

fn main() {}
