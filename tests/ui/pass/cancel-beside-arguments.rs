#![deny(warnings)]
// Issue 49: `cancel` compiles beside every argument shape `#[retry]` takes without it: by-value
// `Copy` and non-`Copy`, generic, `impl Trait`, patterns, receivers; sync and async. (Its
// attempt was a future made in a block that ended before it was awaited: E0597/E0716.)
use retry_jitter::{retry, CancelToken};

#[derive(Clone)]
struct Point {
    x: u64,
    y: u64,
}

static SHUTDOWN: CancelToken = CancelToken::new();

#[retry(base = "0ns", cancel = token)]
async fn poll_job(token: &CancelToken, job: u64) -> Result<u64, u32> {
    let _ = token;
    Ok(job)
}

#[retry(base = "0ns", cancel = &SHUTDOWN)]
async fn named(name: impl AsRef<str>, tag: String) -> Result<usize, u32> {
    Ok(name.as_ref().len() + tag.len())
}

#[retry(base = "0ns", cancel = &SHUTDOWN)]
async fn generic_copy<T: Copy + Into<u64> + Send>(n: T) -> Result<u64, u32> {
    Ok(n.into())
}

#[retry(base = "0ns", cancel = &SHUTDOWN)]
async fn generic_clone<T: Clone + Into<String> + Send>(s: T) -> Result<String, u32> {
    Ok(s.into())
}

#[retry(base = "0ns", cancel = &SHUTDOWN)]
async fn pattern((a, b): (u64, u64), Point { x, y }: Point, &c: &u64) -> Result<u64, u32> {
    Ok(a + b + x + y + c)
}

#[retry(base = "0ns", cancel = &SHUTDOWN, timeout = "1s")]
async fn timed(token: &CancelToken, job: u64, name: impl AsRef<str>) -> std::io::Result<u64> {
    let _ = token;
    Ok(job + name.as_ref().len() as u64)
}

#[retry(base = "0ns", cancel = token)]
fn sync_poll(token: &CancelToken, job: u64, (a, _): (u64, u8), name: impl AsRef<str>) -> Result<u64, u32> {
    let _ = token;
    Ok(job + a + name.as_ref().len() as u64)
}

#[derive(Clone)]
struct Client {
    base: u64,
    token: &'static CancelToken,
}

impl Client {
    #[retry(base = "0ns", cancel = self.token)]
    async fn by_ref(&self, job: u64) -> Result<u64, u32> {
        Ok(self.base + job)
    }

    #[retry(base = "0ns", cancel = &SHUTDOWN)]
    async fn by_mut(&mut self, job: u64) -> Result<u64, u32> {
        self.base += 1;
        Ok(self.base + job)
    }

    #[retry(base = "0ns", cancel = &SHUTDOWN)]
    async fn by_value(self, job: u64) -> Result<u64, u32> {
        Ok(self.base + job)
    }

    #[retry(base = "0ns", cancel = self.token)]
    fn sync_by_ref(&self, job: u64) -> Result<u64, u32> {
        Ok(self.base + job)
    }
}

fn assert_send<T: Send>(t: T) -> T {
    t
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let token = CancelToken::new();
    assert_eq!(assert_send(poll_job(&token, 7)).await, Ok(7));
    assert_eq!(named("ab", String::from("c")).await, Ok(3));
    assert_eq!(generic_copy(4u8).await, Ok(4));
    assert_eq!(generic_clone("s").await.as_deref(), Ok("s"));
    assert_eq!(pattern((1, 2), Point { x: 3, y: 4 }, &5).await, Ok(15));
    assert_eq!(timed(&token, 1, "xy").await.ok(), Some(3));
    assert_eq!(sync_poll(&token, 1, (2, 0), "abc"), Ok(6));
    let mut client = Client { base: 10, token: &SHUTDOWN };
    assert_eq!(client.by_ref(1).await, Ok(11));
    assert_eq!(client.by_mut(1).await, Ok(12));
    assert_eq!(client.sync_by_ref(1), Ok(12));
    assert_eq!(client.by_value(2).await, Ok(13));
}
