use retry_jitter::retry;

// Issue 17, class 6: sqlx's shape. `Error` gets its `From` impls from a blanket impl over a
// trait of its own, which `TimedOut` does not implement: the message is the `timeout` key's.
pub trait DatabaseError: std::fmt::Debug {}

#[derive(Debug)]
pub enum Error {
    Database(String),
}

impl<E: DatabaseError> From<E> for Error {
    fn from(e: E) -> Self {
        Error::Database(format!("{e:?}"))
    }
}

#[retry(timeout = "2s")]
async fn fetch(id: u64) -> Result<u64, Error> {
    if id == 0 { Err(Error::Database("gone".into())) } else { Ok(id) }
}

fn main() {
    let _ = fetch(1);
}
