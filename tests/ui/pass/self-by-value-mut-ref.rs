#![deny(warnings)]
// Issue 17, class 9: `self` by value where `Self` is a `&mut T` (serde's
// `impl Serializer for &'a mut Serializer<W>`): a `&mut` is never `Clone`, so each attempt
// re-borrows it, as it would a `&mut T` argument. A `Clone` `Self` is still cloned.
use retry_jitter::retry;

pub trait Serializer {
    fn serialize_bool(self, v: bool) -> Result<usize, usize>;
    fn serialize_str(self, v: &str) -> Result<usize, usize>;
}

pub struct Json<W> {
    out: W,
    calls: usize,
}

// Moves what it is given: each attempt's `self` is its own re-borrow.
fn write<W: Extend<u8>>(ser: &mut Json<W>, bytes: &[u8]) -> Result<usize, usize> {
    ser.calls += 1;
    ser.out.extend(bytes.iter().copied());
    if ser.calls % 3 != 0 { Err(ser.calls) } else { Ok(ser.calls) }
}

impl<W: Extend<u8>> Serializer for &mut Json<W> {
    #[retry(attempts = 3, base = "0ns")]
    fn serialize_bool(self, v: bool) -> Result<usize, usize> {
        write(self, if v { b"t" } else { b"f" })
    }

    // `mut self`: the attempt's re-borrow is `mut`.
    #[retry(attempts = 3, base = "0ns")]
    fn serialize_str(mut self, v: &str) -> Result<usize, usize> {
        let ser: &mut &mut Json<W> = &mut self;
        write(ser, v.as_bytes())
    }
}

impl<W: Extend<u8>> Json<W> {
    #[retry(attempts = 3, base = "0ns")]
    async fn flush(self: &mut Self) -> Result<usize, usize> {
        tokio::task::yield_now().await;
        write(self, b";")
    }
}

trait AsyncSerializer {
    async fn serialize_u8(self, v: u8) -> Result<usize, usize>;
}

impl<W: Extend<u8>> AsyncSerializer for &mut Json<W> {
    #[retry(attempts = 3, base = "0ns")]
    async fn serialize_u8(self, v: u8) -> Result<usize, usize> {
        tokio::task::yield_now().await;
        write(self, &[b'0' + v])
    }
}

// A `Clone` `Self` is still cloned per attempt, hedged attempts too.
#[derive(Clone)]
struct Query(u32);

impl Query {
    #[retry(attempts = 3, base = "0ns")]
    fn run(mut self) -> Result<u32, u32> {
        self.0 += 1;
        if self.0 < 2 { Err(self.0) } else { Ok(self.0) }
    }

    #[retry(attempts = 3, base = "0ns", hedge = "1s")]
    async fn run_hedged(self) -> Result<u32, u32> {
        Ok(self.0)
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    // Each attempt starts from the caller's value: `1 + 1` every time, so all three fail.
    assert_eq!(Query(0).run(), Err(1));
    assert_eq!(Query(1).run(), Ok(2));
    assert_eq!(Query(4).run_hedged().await, Ok(4));
    let mut json = Json { out: Vec::new(), calls: 0 };
    assert_eq!((&mut json).serialize_bool(true), Ok(3));
    assert_eq!((&mut json).serialize_str("a"), Ok(6));
    assert_eq!((&mut json).serialize_u8(7).await, Ok(9));
    assert_eq!(json.flush().await, Ok(12));
    // Every attempt wrote: three of each.
    assert_eq!(json.out, b"tttaaa777;;;");
}
