use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use bytes::Bytes;
use http_body_util::Full;
use hyper_util::client::legacy::{connect::HttpConnector, Client};
use hyper_util::rt::TokioExecutor;
use retry_jitter::tower::{ChainLayer, RetryLayer, RetryService};
use retry_jitter::Policy;
use tower::{Layer, ServiceExt};

/// The client of the tier below, built once and shared by every request: `RetryService<S>`
/// is what `RetryLayer::new(policy)` makes around `S`.
type Inventory = RetryService<Client<HttpConnector, Full<Bytes>>>;

#[derive(Clone)]
struct Shop {
    inventory: Inventory,
    inventory_url: String,
}

async fn stock(State(shop): State<Shop>) -> StatusCode {
    let url = format!("{}/stock", shop.inventory_url);
    let req = http::Request::get(url).body(Full::default()).unwrap();
    // 4 attempts within 5 s, and never past this request's deadline.
    match shop.inventory.oneshot(req).await {
        Ok(resp) if resp.status().is_success() => StatusCode::OK,
        // Retried and given up: ChainLayer adds `x-should-retry: false` to this answer, so
        // the tiers above do not retry what was already retried.
        _ => StatusCode::SERVICE_UNAVAILABLE,
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let (inventory_url, inventory_calls) = stand_in::start().await?;

    let policy = Policy::new()
        .with_attempts(4)
        .with_base(Duration::from_millis(20))
        .with_max_elapsed(Duration::from_secs(5));
    let shop = Shop {
        inventory: RetryLayer::new(policy)
            .layer(Client::builder(TokioExecutor::new()).build_http()),
        inventory_url,
    };
    // Outside clients reach this service: `edge()` believes no deadline a request carries,
    // and gives each request one of the service's own.
    let app = axum::Router::new()
        .route("/stock", get(stock))
        .with_state(shop)
        .layer(ChainLayer::edge().deadline(Duration::from_millis(300)));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let shop_url = format!("http://{}", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, app).await });

    // A caller: one request to the shop, whose inventory answers 503 after 100 ms.
    let caller: Client<HttpConnector, Full<Bytes>> =
        Client::builder(TokioExecutor::new()).build_http();
    let started = Instant::now();
    let req = http::Request::get(format!("{shop_url}/stock")).body(Full::default())?;
    let resp = caller.request(req).await?;
    println!(
        "the shop answered {} after {} ms, x-should-retry: {:?}",
        resp.status(),
        started.elapsed().as_millis(),
        resp.headers().get("x-should-retry"),
    );
    println!("the inventory was called {} times", inventory_calls());
    Ok(())
}

/// A stand-in for the tier below on a loopback port: every call answers `503` after 100 ms.
mod stand_in {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    use axum::http::StatusCode;
    use axum::routing::get;

    pub async fn start() -> std::io::Result<(String, impl Fn() -> u32)> {
        let calls = Arc::new(AtomicU32::new(0));
        let counted = calls.clone();
        let app = axum::Router::new().route(
            "/stock",
            get(move || async move {
                counted.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(100)).await;
                StatusCode::SERVICE_UNAVAILABLE
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        tokio::spawn(async move { axum::serve(listener, app).await });
        Ok((format!("http://{addr}"), move || {
            calls.load(Ordering::SeqCst)
        }))
    }
}
