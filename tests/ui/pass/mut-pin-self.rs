#![deny(warnings)]
// Issue 17, class 4: `mut self: Pin<&mut Self>` (tokio's and object_store's `start_seek`): the
// body changes the `Pin` itself (`self.field = …` through `DerefMut`, `self.as_mut()`), so each
// attempt's re-borrow keeps the `mut`.
use retry_jitter::retry;
use std::pin::Pin;

struct Seek {
    calls: u32,
    pos: u64,
}

fn touch(seek: Pin<&mut Seek>) -> u32 {
    let seek = seek.get_mut();
    seek.calls += 1;
    seek.calls
}

impl Seek {
    #[retry(attempts = 3, base = "0ns")]
    fn start_seek(mut self: Pin<&mut Self>, pos: u64) -> Result<u32, u32> {
        self.pos = pos;
        let n = touch(self.as_mut());
        if n < 3 { Err(n) } else { Ok(n) }
    }

    #[retry(attempts = 3, base = "0ns")]
    async fn start_seek_async(mut self: Pin<&mut Self>, pos: u64) -> Result<u32, u32> {
        tokio::task::yield_now().await;
        self.pos += pos;
        let n = touch(self.as_mut());
        if n < 6 { Err(n) } else { Ok(n) }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut seek = Seek { calls: 0, pos: 0 };
    assert_eq!(Pin::new(&mut seek).start_seek(7), Ok(3));
    assert_eq!(seek.pos, 7);
    assert_eq!(Pin::new(&mut seek).start_seek_async(1).await, Ok(6));
    // Three attempts each added 1.
    assert_eq!(seek.pos, 10);
}
