use retry_jitter::retry;
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
}
