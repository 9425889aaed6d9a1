#![deny(warnings)]
// Issue 17, class 2: `&mut self` is re-borrowed per attempt, as a `&mut T` argument is, so a
// body can pass `self` on to a generic callee, which moves what it is given (regex-syntax's
// `ParserI::new(self, pattern).parse()`, sqlx's `fetch_one(self)`).
use retry_jitter::retry;
use std::borrow::BorrowMut;

struct Conn {
    calls: u32,
}

// Generic: `self` is moved into it, not re-borrowed by the call.
fn query<C: BorrowMut<Conn>>(mut conn: C, until: u32) -> Result<u32, u32> {
    let conn = conn.borrow_mut();
    conn.calls += 1;
    if conn.calls < until { Err(conn.calls) } else { Ok(conn.calls) }
}

async fn fetch_one<C: BorrowMut<Conn>>(conn: C, until: u32) -> Result<u32, u32> {
    tokio::task::yield_now().await;
    query(conn, until)
}

struct Parser<C>(C);

impl<C: BorrowMut<Conn>> Parser<C> {
    fn parse(self) -> Result<u32, u32> {
        query(self.0, 3)
    }
}

impl Conn {
    #[retry(attempts = 3, base = "0ns")]
    fn parse(&mut self) -> Result<u32, u32> {
        Parser(self).parse()
    }

    #[retry(attempts = 3, base = "0ns")]
    async fn fetch(&mut self) -> Result<u32, u32> {
        let n = fetch_one(self, 6).await?;
        Ok(n)
    }

    // A macro in the body: the attempt is a nested `async` block, and re-borrows too.
    #[retry(attempts = 3, base = "0ns")]
    async fn fetch_nested(&mut self) -> Result<u32, u32> {
        let n = fetch_one(self, 9).await;
        assert!(n.is_ok() || n.is_err());
        n
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut conn = Conn { calls: 0 };
    assert_eq!(conn.parse(), Ok(3));
    assert_eq!(conn.fetch().await, Ok(6));
    assert_eq!(conn.fetch_nested().await, Ok(9));
    assert_eq!(conn.calls, 9);
}
