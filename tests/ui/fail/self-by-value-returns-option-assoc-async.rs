use retry_jitter::retry;

// Not `Clone`.
struct Conn;

trait Fetch {
    type Row;
    async fn fetch(self) -> Result<Option<Self::Row>, String>;
}

impl Fetch for Conn {
    type Row = u32;

    // `async`, and `Self` deeper in the `Ok` type: still one error, at `self`.
    #[retry(attempts = 2)]
    async fn fetch(self) -> Result<Option<Self::Row>, String> {
        let _conn = self;
        Ok(Some(1))
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let _ = Conn.fetch().await;
}
