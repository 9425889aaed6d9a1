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

fn assert_send<T: Send>(t: T) -> T {
    t
}

#[tokio::main]
async fn main() {
    let client = Arc::new(Client { base: "http://x".to_owned() });
    let c = Arc::clone(&client);
    let handle = tokio::spawn(async move { assert_send(get(&c, "/a".to_owned())).await });
    assert_eq!(handle.await.unwrap(), Ok("http://x/a".to_owned()));
}
