// Receivers each attempt needs its own copy of: `Clone` ones (`Arc<Self>`, `Rc<Self>`, a `Clone`
// `Self` by value or boxed) are cloned per attempt, `Pin<&mut Self>` is re-borrowed.
use retry_jitter::retry;
use std::cell::Cell;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

struct Service {
    calls: AtomicU32,
}

impl Service {
    fn take(self: Arc<Self>) -> u32 {
        self.calls.fetch_add(1, Ordering::SeqCst) + 1
    }

    // The body moves `self`: each attempt has its own `Arc`.
    #[retry(attempts = 3, base = "0ns")]
    fn run(self: Arc<Self>) -> Result<u32, u32> {
        let n = Service::take(self);
        if n < 3 { Err(n) } else { Ok(n) }
    }

    // A service that spawns: the attempt hands its `Arc` to a task.
    #[retry(attempts = 3, base = "0ns")]
    async fn run_async(self: Arc<Self>) -> Result<u32, u32> {
        let n = tokio::spawn(async move { self.take() }).await.unwrap();
        if n < 6 { Err(n) } else { Ok(n) }
    }
}

struct Local {
    calls: Cell<u32>,
}

impl Local {
    fn take(self: Rc<Self>) -> u32 {
        self.calls.set(self.calls.get() + 1);
        self.calls.get()
    }

    #[retry(attempts = 3, base = "0ns")]
    fn run(self: Rc<Self>) -> Result<u32, u32> {
        let n = Local::take(self);
        if n < 3 { Err(n) } else { Ok(n) }
    }

    #[retry(attempts = 3, base = "0ns")]
    async fn run_async(self: Rc<Self>) -> Result<u32, u32> {
        tokio::task::yield_now().await;
        let n = self.take();
        if n < 6 { Err(n) } else { Ok(n) }
    }
}

struct Pinned {
    calls: u32,
}

impl Pinned {
    // `get_mut` consumes the `Pin`: each attempt gets its own re-borrow.
    #[retry(attempts = 3, base = "0ns")]
    fn bump(self: Pin<&mut Self>) -> Result<u32, u32> {
        let this = self.get_mut();
        this.calls += 1;
        if this.calls < 3 { Err(this.calls) } else { Ok(this.calls) }
    }

    #[retry(attempts = 3, base = "0ns")]
    async fn bump_async(self: Pin<&mut Self>) -> Result<u32, u32> {
        tokio::task::yield_now().await;
        let this = self.get_mut();
        this.calls += 1;
        if this.calls < 6 { Err(this.calls) } else { Ok(this.calls) }
    }
}

thread_local! {
    static CALLS: Cell<u32> = const { Cell::new(0) };
}

fn call() -> u32 {
    CALLS.with(|c| {
        c.set(c.get() + 1);
        c.get()
    })
}

#[derive(Clone)]
struct Request {
    tries: Vec<u32>,
}

impl Request {
    // `mut self` of a `Clone` type: each attempt starts from the caller's value.
    #[retry(attempts = 3, base = "0ns")]
    fn send(mut self) -> Result<Vec<u32>, usize> {
        self.tries.push(call());
        if self.tries.len() != 1 {
            return Err(self.tries.len());
        }
        if self.tries[0] < 3 { Err(0) } else { Ok(self.tries) }
    }

    #[retry(attempts = 3, base = "0ns")]
    async fn send_async(self: Box<Self>) -> Result<Vec<u32>, u32> {
        let n = call();
        let tries = self.tries;
        if n < 6 { Err(n) } else { Ok(tries) }
    }
}

fn assert_send<T: Send>(t: T) -> T {
    t
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let service = Arc::new(Service { calls: AtomicU32::new(0) });
    assert_eq!(Arc::clone(&service).run(), Ok(3));
    let spawned = tokio::spawn(assert_send(Arc::clone(&service).run_async()));
    assert_eq!(spawned.await.unwrap(), Ok(6));
    assert_eq!(Arc::strong_count(&service), 1);

    let local = Rc::new(Local { calls: Cell::new(0) });
    assert_eq!(Rc::clone(&local).run(), Ok(3));
    assert_eq!(Rc::clone(&local).run_async().await, Ok(6));
    assert_eq!(Rc::strong_count(&local), 1);

    let mut pinned = Pinned { calls: 0 };
    assert_eq!(Pin::new(&mut pinned).bump(), Ok(3));
    assert_eq!(Pin::new(&mut pinned).bump_async().await, Ok(6));

    let request = Request { tries: Vec::new() };
    assert_eq!(request.clone().send(), Ok(vec![3]));
    assert_eq!(Box::new(request).send_async().await, Ok(Vec::new()));
    assert_eq!(CALLS.with(Cell::get), 6);
}
