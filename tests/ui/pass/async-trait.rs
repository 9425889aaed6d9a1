// `#[retry]` on `#[async_trait]` methods: async-trait expands first, into a function returning
// `Pin<Box<dyn Future + Send>>`; the inner future is what is retried (so it must stay `Send`).
use async_trait::async_trait;
use retry_jitter::retry;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

#[derive(Default)]
struct Flaky {
    calls: AtomicU32,
    fail: u32,
}

impl Flaky {
    fn call(&self) -> Result<u32, String> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
        if n <= self.fail { Err(format!("call {n} failed")) } else { Ok(n) }
    }

    fn calls(&self) -> u32 {
        self.calls.swap(0, Ordering::SeqCst)
    }
}

// A default method of an `#[async_trait]` trait.
#[async_trait]
trait Store {
    fn flaky(&self) -> &Flaky;

    #[retry(attempts = 3, base = "0ns")]
    async fn load(&self, key: String) -> Result<u32, String> {
        tokio::task::yield_now().await;
        let n = self.flaky().call()?;
        Ok(n + key.len() as u32)
    }
}

#[async_trait]
trait Service {
    async fn call(&self, req: String, pair: (u32, u32)) -> Result<u32, String>;
    async fn bump(&mut self) -> Result<u32, u32>;
    async fn shared(self: Arc<Self>) -> Result<u32, String>;
    async fn nested(&self) -> Result<u32, String>;
    async fn stopping(&self) -> Result<u32, String>;
    async fn timed(&self) -> Result<u32, std::io::Error>;
}

struct Svc {
    flaky: Flaky,
    bumps: u32,
}

impl Store for Svc {
    fn flaky(&self) -> &Flaky {
        &self.flaky
    }
}

macro_rules! checked {
    ($e:expr) => {
        $e?
    };
}

#[async_trait]
impl Service for Svc {
    // By-value and pattern arguments: each attempt gets its own copy.
    #[retry(attempts = 3, base = "0ns")]
    async fn call(&self, mut req: String, (a, b): (u32, u32)) -> Result<u32, String> {
        req.push('!');
        tokio::task::yield_now().await;
        let n = self.flaky.call()?;
        Ok(n + a + b + req.len() as u32)
    }

    // `&mut self`: re-borrowed for each attempt.
    #[retry(attempts = 4, base = "0ns")]
    async fn bump(&mut self) -> Result<u32, u32> {
        self.bumps += 1;
        tokio::task::yield_now().await;
        if self.bumps < 4 { Err(self.bumps) } else { Ok(self.bumps) }
    }

    // `self: Arc<Self>`: cloned for each attempt, and moved into a task.
    #[retry(attempts = 3, base = "0ns")]
    async fn shared(self: Arc<Self>) -> Result<u32, String> {
        tokio::spawn(async move { self.flaky.call() }).await.unwrap()
    }

    // A macro of the user's: the attempt is a nested block.
    #[retry(attempts = 3, base = "0ns")]
    async fn nested(&self) -> Result<u32, String> {
        Ok(checked!(self.flaky.call()))
    }

    // Keys as usual.
    #[retry(attempts = 3, base = "0ns", on = |e: &String| !e.contains("1"))]
    async fn stopping(&self) -> Result<u32, String> {
        self.flaky.call()
    }

    // An attempt raced against its timer: the first one never answers in time.
    #[retry(attempts = 3, base = "0ns", timeout = "1s")]
    async fn timed(&self) -> Result<u32, std::io::Error> {
        let n = self.flaky.call().unwrap_or(0);
        if n == 1 {
            tokio::time::sleep(std::time::Duration::from_secs(60)).await;
        }
        Ok(n)
    }
}

// `?Send`: a future that need not be `Send`.
#[async_trait(?Send)]
trait Local {
    async fn local(&self) -> Result<u32, String>;
}

#[async_trait(?Send)]
impl Local for Flaky {
    #[retry(attempts = 3, base = "0ns")]
    async fn local(&self) -> Result<u32, String> {
        let rc = std::rc::Rc::new(());
        tokio::task::yield_now().await;
        drop(rc);
        self.call()
    }
}

// With `#[tracing::instrument]`, in either order: each recognises the other's output.
#[async_trait]
trait Traced {
    async fn outer(&self) -> Result<u32, String>;
    async fn inner(&self) -> Result<u32, String>;
}

#[async_trait]
impl Traced for Flaky {
    #[retry(attempts = 3, base = "0ns")]
    #[tracing::instrument(skip(self))]
    async fn outer(&self) -> Result<u32, String> {
        self.call()
    }

    #[tracing::instrument(skip(self))]
    #[retry(attempts = 3, base = "0ns")]
    async fn inner(&self) -> Result<u32, String> {
        self.call()
    }
}

fn flaky(fail: u32) -> Flaky {
    Flaky { calls: AtomicU32::new(0), fail }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut svc = Svc { flaky: flaky(2), bumps: 0 };
    assert_eq!(svc.load("ab".to_owned()).await, Ok(5));
    assert_eq!(svc.flaky.calls(), 3);

    // Each attempt pushes to its own copy of `req`: "x!" every time.
    assert_eq!(svc.call("x".to_owned(), (10, 20)).await, Ok(3 + 30 + 2));
    assert_eq!(svc.flaky.calls(), 3);
    svc.flaky.fail = 5;
    assert_eq!(svc.call("x".to_owned(), (10, 20)).await, Err("call 3 failed".to_owned()));
    assert_eq!(svc.flaky.calls(), 3);

    assert_eq!(svc.bump().await, Ok(4));

    svc.flaky.fail = 2;
    assert_eq!(svc.nested().await, Ok(3));
    assert_eq!(svc.flaky.calls(), 3);
    assert_eq!(svc.stopping().await, Err("call 1 failed".to_owned()));
    assert_eq!(svc.flaky.calls(), 1);

    svc.flaky.fail = 0;
    tokio::time::pause();
    assert_eq!(svc.timed().await.unwrap(), 2);
    tokio::time::resume();
    assert_eq!(svc.flaky.calls(), 2);

    svc.flaky.fail = 2;
    let svc = Arc::new(svc);
    let spawned = tokio::spawn(Arc::clone(&svc).shared());
    assert_eq!(spawned.await.unwrap(), Ok(3));
    assert_eq!(svc.flaky.calls(), 3);
    assert_eq!(Arc::strong_count(&svc), 1);

    let local = flaky(2);
    assert_eq!(local.local().await, Ok(3));
    assert_eq!(local.calls(), 3);
    assert_eq!(local.outer().await, Ok(3));
    assert_eq!(local.calls(), 3);
    assert_eq!(local.inner().await, Ok(3));
    assert_eq!(local.calls(), 3);
}
