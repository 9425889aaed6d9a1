//! gRPC calls through `RetryLayer` (issue 29): every gRPC call is a `POST` on the wire, yet it
//! keeps the gRPC status table (`UNAVAILABLE` and `RESOURCE_EXHAUSTED` retried), while a
//! transport error after the call was sent — the server may have run it — is retried only with
//! `.idempotent()`. A tonic client over a real `Channel`, against a real tonic server (a
//! hand-written service and codec: no protoc) and a raw HTTP/2 server on loopback, both
//! counting what they get.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use retry_jitter::tower::RetryLayer;
use retry_jitter::Policy;
use tonic::transport::Channel;
use tonic::{Code, Status};

use crate::grpc_raw;
use crate::h2_frames;

use grpc_raw::Raw;

/// Four attempts, tiny waits.
fn four() -> Policy {
    Policy::new()
        .with_attempts(4)
        .with_base(Duration::from_millis(2))
        .with_cap(Duration::from_millis(10))
}

/// A tonic server answering every call with `code`; its address and its count of calls.
async fn answering(code: Code) -> (SocketAddr, Arc<AtomicU32>) {
    let calls = Arc::new(AtomicU32::new(0));
    let counted = calls.clone();
    let addr = grpc_raw::serve(move |_| {
        counted.fetch_add(1, Ordering::SeqCst);
        async move { Err(Status::new(code, "not now")) }
    })
    .await;
    (addr, calls)
}

/// A raw HTTP/2 server that reads each call whole (to its `END_STREAM`), counts it, then
/// closes the connection without answering (the server may have run it) or, when
/// `go_away`, first sends `GOAWAY` with last stream id 0 (it processed none of the
/// connection's streams).
async fn reads_then_closes(go_away: bool) -> (SocketAddr, Arc<AtomicU32>) {
    let calls = Arc::new(AtomicU32::new(0));
    let counted = calls.clone();
    let addr = h2_frames::serve_each(move |mut conn| {
        let calls = counted.clone();
        async move {
            if h2_frames::read_request(&mut conn).await.is_ok() {
                calls.fetch_add(1, Ordering::SeqCst);
                if go_away {
                    let frame = h2_frames::go_away(0, 0, b"");
                    let _ = tokio::io::AsyncWriteExt::write_all(&mut conn, &frame).await;
                }
            }
            h2_frames::close(conn).await;
        }
    })
    .await;
    (addr, calls)
}

/// One unary call to `test.Svc/Place` through `layer` over a `Channel` to `addr`.
async fn place(addr: SocketAddr, layer: RetryLayer) -> Result<Bytes, Status> {
    let channel = Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect_lazy();
    let svc = tower::ServiceBuilder::new().layer(layer).service(channel);
    let mut client = tonic::client::Grpc::new(svc);
    client.ready().await.unwrap();
    let path = http::uri::PathAndQuery::from_static("/test.Svc/Place");
    let resp = client
        .unary(tonic::Request::new(Bytes::from("one order")), path, Raw)
        .await?;
    Ok(resp.into_inner())
}

#[tokio::test]
async fn a_grpc_call_keeps_the_grpc_table() {
    for (code, expected) in [
        (Code::Unavailable, 4),
        (Code::ResourceExhausted, 4),
        (Code::Internal, 1),
        (Code::InvalidArgument, 1),
    ] {
        let (addr, calls) = answering(code).await;
        let got = place(addr, RetryLayer::new(four())).await;
        assert_eq!(got.unwrap_err().code(), code);
        assert_eq!(calls.load(Ordering::SeqCst), expected, "{code:?}");
    }
}

#[tokio::test]
async fn a_grpc_call_whose_connection_closed_after_it_was_read_is_sent_once_unless_idempotent() {
    for (layer, expected) in [
        (RetryLayer::new(four()), 1),
        (RetryLayer::new(four()).idempotent(), 4),
    ] {
        let (addr, calls) = reads_then_closes(false).await;
        let got = place(addr, layer).await;
        assert!(got.is_err(), "{got:?}");
        assert_eq!(calls.load(Ordering::SeqCst), expected, "{got:?}");
    }
}

#[tokio::test]
async fn a_grpc_call_on_a_stream_beyond_a_goaway_is_retried_without_idempotent() {
    let (addr, calls) = reads_then_closes(true).await;
    let got = place(addr, RetryLayer::new(four())).await;
    assert!(got.is_err(), "{got:?}");
    assert_eq!(calls.load(Ordering::SeqCst), 4, "never processed: {got:?}");
}
