#![deny(warnings)]
// A `self` by value where the return type names `Self` (it may hold a borrow of a `Self` that
// is a `&mut`): a `Clone` `Self` is cloned per attempt and may be returned, `Arc` and `Rc`
// receivers too; a `&mut` `Self` whose return type does not name `Self` is re-borrowed.
use retry_jitter::retry;
use std::rc::Rc;
use std::sync::Arc;

#[derive(Clone, Debug)]
struct Doc(u32);

trait Parse {
    type Output;
    fn parse(self) -> Result<Self::Output, u32>;
    async fn parse_async(self) -> Result<Option<Self::Output>, u32>;
}

impl Parse for Doc {
    type Output = u32;

    #[retry(attempts = 2, base = "0ns")]
    fn parse(self) -> Result<Self::Output, u32> {
        Ok(self.0)
    }

    #[retry(attempts = 2, base = "0ns")]
    async fn parse_async(self) -> Result<Option<Self::Output>, u32> {
        tokio::task::yield_now().await;
        Ok(Some(self.0))
    }
}

impl Doc {
    // Each attempt starts from the caller's value: `1 + 1` every time, so both fail.
    #[retry(attempts = 2, base = "0ns")]
    fn bump(mut self) -> Result<Self, Self> {
        self.0 += 1;
        if self.0 < 3 { Err(self) } else { Ok(self) }
    }

    #[retry(attempts = 2, base = "0ns")]
    async fn bump_async(mut self) -> Result<Option<Self>, u32> {
        self.0 += 1;
        Ok(Some(self))
    }

    #[retry(attempts = 2, base = "0ns")]
    fn from_arc(self: Arc<Self>) -> Result<Self, u32> {
        Ok((*self).clone())
    }

    #[retry(attempts = 2, base = "0ns")]
    fn from_rc(self: Rc<Self>) -> Result<Self, u32> {
        Ok((*self).clone())
    }
}

struct Json {
    out: Vec<u8>,
}

trait Serializer {
    fn push(self, b: u8) -> Result<usize, usize>;
}

impl Serializer for &mut Json {
    #[retry(attempts = 3, base = "0ns")]
    fn push(self, b: u8) -> Result<usize, usize> {
        self.out.push(b);
        if self.out.len() < 3 { Err(self.out.len()) } else { Ok(self.out.len()) }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    assert_eq!(Doc(1).parse(), Ok(1));
    assert_eq!(Doc(2).parse_async().await, Ok(Some(2)));
    assert_eq!(Doc(1).bump().unwrap_err().0, 2);
    assert_eq!(Doc(2).bump().unwrap().0, 3);
    assert_eq!(Doc(1).bump_async().await.unwrap().unwrap().0, 2);
    assert_eq!(Arc::new(Doc(3)).from_arc().unwrap().0, 3);
    assert_eq!(Rc::new(Doc(4)).from_rc().unwrap().0, 4);
    let mut json = Json { out: Vec::new() };
    assert_eq!((&mut json).push(b'a'), Ok(3));
    assert_eq!(json.out, b"aaa");
}
