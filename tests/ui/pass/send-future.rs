use retry_jitter::retry;
use std::cell::Cell;
use std::sync::Arc;

struct Client {
    base: String,
}

#[retry(base = "1ms")]
async fn get(client: &Client, path: String) -> Result<String, String> {
    tokio::task::yield_now().await;
    Ok(format!("{}{path}", client.base))
}

// A macro of the user's keeps the attempt in a nested `async` block: Send all the same.
macro_rules! joined {
    ($a:expr, $b:expr) => {
        format!("{}{}", $a, $b)
    };
}

#[retry(base = "1ms")]
async fn get_nested(client: &Client, path: String) -> Result<String, String> {
    tokio::task::yield_now().await;
    Ok(joined!(client.base, path))
}

// By-value arguments that are `Send` but not `Sync`, in a nested attempt (a macro of the user's,
// `anyhow::bail!`): the attempt owns its copy, as the function does, and borrows none across an
// `.await`, so the future stays `Send`.
#[retry(attempts = 3, base = "1ms")]
async fn count_nested(seen: Cell<u32>) -> Result<u32, String> {
    tokio::task::yield_now().await;
    seen.set(seen.get() + 1);
    Ok(joined!(seen.get(), "").len() as u32)
}

#[retry(attempts = 3, base = "1ms")]
async fn generic_nested<T: Clone + Send + std::fmt::Debug>(value: T) -> anyhow::Result<String> {
    tokio::task::yield_now().await;
    if format!("{value:?}").is_empty() {
        anyhow::bail!("empty");
    }
    Ok(format!("{value:?}"))
}

// With every hook given: they are held across the waits, and keep the future `Send`.
#[retry(
    attempts = 3,
    base = "1ms",
    on = |e: &String| !e.is_empty(),
    notify = |e, ev| eprintln!("{e} #{}", ev.attempt),
    give_up = |e, g| eprintln!("{e}: {}", g.reason)
)]
async fn hooked(client: &Client) -> Result<usize, String> {
    tokio::task::yield_now().await;
    Err(client.base.clone())
}

fn assert_send<T: Send>(t: T) -> T {
    t
}

#[tokio::main]
async fn main() {
    let client = Arc::new(Client { base: "http://x".to_owned() });
    let c = Arc::clone(&client);
    let handle = tokio::spawn(async move { assert_send(get(&c, "/a".to_owned())).await });
    assert_eq!(handle.await.unwrap(), Ok("http://x/a".to_owned()));
    let c = Arc::clone(&client);
    let handle = tokio::spawn(async move { assert_send(get_nested(&c, "/b".to_owned())).await });
    assert_eq!(handle.await.unwrap(), Ok("http://x/b".to_owned()));
    let c = Arc::clone(&client);
    let handle = tokio::spawn(async move { assert_send(hooked(&c)).await });
    assert_eq!(handle.await.unwrap(), Err("http://x".to_owned()));
    let handle = tokio::spawn(assert_send(count_nested(Cell::new(6))));
    assert_eq!(handle.await.unwrap(), Ok(1));
    let handle = tokio::spawn(assert_send(generic_nested(Cell::new(7))));
    assert_eq!(handle.await.unwrap().unwrap(), "Cell { value: 7 }");
}
