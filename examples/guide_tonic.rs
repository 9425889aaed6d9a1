use std::time::Duration;

use bytes::Bytes;
use http::uri::PathAndQuery;
use retry_jitter::tonic::{ServiceConfig, ServiceConfigLayer};
use retry_jitter::tower::RetryLayer;
use retry_jitter::{retry, Policy, RetryBudget};
use tonic::transport::Channel;
use tonic::{Request, Status};
use tower::Layer;

use stand_in::Raw;

static BUDGET: RetryBudget = RetryBudget::new(500);

const STOCK: &str = "/inventory.Inventory/Stock";

/// gRPC's service config as grpc-java's retrying example writes it (its name, here, this
/// service's), with retry throttling: the JSON every gRPC client reads.
const SERVICE_CONFIG: &str = r#"{
  "methodConfig": [
    {
      "name": [{ "service": "inventory.Inventory", "method": "Stock" }],
      "retryPolicy": {
        "maxAttempts": 5,
        "initialBackoff": "0.5s",
        "maxBackoff": "30s",
        "backoffMultiplier": 2,
        "retryableStatusCodes": ["UNAVAILABLE"]
      }
    }
  ],
  "retryThrottling": { "maxTokens": 10, "tokenRatio": 0.1 }
}"#;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let addr = stand_in::start().await?; // your server, e.g. "http://inventory:50051"

    // 1. The retry loop as a layer around the channel: every call through it is retried by the
    //    gRPC table (UNAVAILABLE; RESOURCE_EXHAUSTED after the server's pushback).
    let channel = Channel::from_shared(addr.clone())?.connect().await?;
    let channel = tower::ServiceBuilder::new()
        .layer(
            RetryLayer::new(
                Policy::new()
                    .with_attempts(4)
                    .with_base(Duration::from_millis(50)),
            )
            .budget(&BUDGET)
            .timeout(Duration::from_secs(2))
            .with_name("inventory"),
        )
        .service(channel);
    // tonic-build's generated client takes it the same way: `InventoryClient::new(channel)`.
    let mut client = tonic::client::Grpc::new(channel);
    client.ready().await?;
    let path = PathAndQuery::from_static(STOCK);
    let reply = client
        .unary(Request::new(Bytes::from("A-1")), path, Raw)
        .await?;
    println!("through RetryLayer: {:?}", reply.into_inner());

    // 2. Or `#[retry]` on a function that makes its request in its body: each attempt a new one.
    let channel = Channel::from_shared(addr.clone())?.connect().await?;
    println!("through #[retry]:   {:?}", stock(&channel, "B-2").await?);

    // 3. Or the service config your other gRPC clients read, applied as they apply it (gRFC
    //    A6): each method its policy, the channel one throttle, A6's backoff and pushback.
    let config = ServiceConfig::from_json(SERVICE_CONFIG)?;
    let channel = Channel::from_shared(addr)?.connect().await?;
    let channel = ServiceConfigLayer::new(config)
        .target("inventory")
        .layer(channel);
    let mut client = tonic::client::Grpc::new(channel);
    client.ready().await?;
    let path = PathAndQuery::from_static(STOCK);
    let reply = client
        .unary(Request::new(Bytes::from("C-3")), path, Raw)
        .await?;
    println!("through ServiceConfigLayer: {:?}", reply.into_inner());
    Ok(())
}

#[retry(attempts = 4, base = "50ms", on = retry_jitter::transient)] // Transient for tonic::Status
async fn stock(channel: &Channel, sku: &str) -> Result<Bytes, Status> {
    let mut client = tonic::client::Grpc::new(channel.clone()); // or InventoryClient::new(..)
    client
        .ready()
        .await
        .map_err(|e| Status::unavailable(e.to_string()))?;
    let request = Request::new(Bytes::copy_from_slice(sku.as_bytes()));
    let reply = client
        .unary(request, PathAndQuery::from_static(STOCK), Raw)
        .await?;
    Ok(reply.into_inner())
}

/// A stand-in for a gRPC server on a loopback port, without protobuf: messages are raw bytes
/// (the `Raw` codec). Every other call fails with `UNAVAILABLE`; the others echo the request.
mod stand_in {
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Arc;
    use std::task::{Context, Poll};

    use bytes::{Buf, BufMut, Bytes};
    use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
    use tonic::Status;

    /// Messages are raw bytes: no protobuf, no protoc.
    #[derive(Clone, Copy, Default)]
    pub struct Raw;

    impl Codec for Raw {
        type Encode = Bytes;
        type Decode = Bytes;
        type Encoder = Raw;
        type Decoder = Raw;
        fn encoder(&mut self) -> Raw {
            Raw
        }
        fn decoder(&mut self) -> Raw {
            Raw
        }
    }

    impl Encoder for Raw {
        type Item = Bytes;
        type Error = Status;
        fn encode(&mut self, item: Bytes, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
            dst.put(item);
            Ok(())
        }
    }

    impl Decoder for Raw {
        type Item = Bytes;
        type Error = Status;
        fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
            let n = src.remaining();
            Ok(Some(src.copy_to_bytes(n)))
        }
    }

    #[derive(Clone, Default)]
    struct Inventory(Arc<AtomicU32>);

    impl tonic::server::NamedService for Inventory {
        const NAME: &'static str = "inventory.Inventory";
    }

    type Answer = std::pin::Pin<
        Box<
            dyn std::future::Future<
                    Output = Result<http::Response<tonic::body::Body>, std::convert::Infallible>,
                > + Send,
        >,
    >;

    impl tower::Service<http::Request<tonic::body::Body>> for Inventory {
        type Response = http::Response<tonic::body::Body>;
        type Error = std::convert::Infallible;
        type Future = Answer;

        fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
            Poll::Ready(Ok(()))
        }

        fn call(&mut self, req: http::Request<tonic::body::Body>) -> Answer {
            let calls = self.0.clone();
            let handler = tower::service_fn(move |req: tonic::Request<Bytes>| {
                let n = calls.fetch_add(1, Ordering::SeqCst);
                async move {
                    if n % 2 == 0 {
                        Err(Status::unavailable("restarting"))
                    } else {
                        Ok(tonic::Response::new(req.into_inner()))
                    }
                }
            });
            Box::pin(async move { Ok(tonic::server::Grpc::new(Raw).unary(handler, req).await) })
        }
    }

    pub async fn start() -> std::io::Result<String> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let server = tonic::transport::Server::builder()
            .add_service(Inventory::default())
            .serve_with_incoming(tonic::transport::server::TcpIncoming::from(listener));
        tokio::spawn(server);
        Ok(format!("http://{addr}"))
    }
}
