//! A gRPC codec whose messages are raw bytes (no protobuf, no protoc): what the tests' tonic
//! servers and clients send and receive, and a unary service and server made of a handler.
#![allow(dead_code)] // each test file uses what it needs of it

use bytes::Bytes;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::Status;

/// Messages are raw bytes: no protobuf.
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
        bytes::BufMut::put(dst, item);
        Ok(())
    }
}

impl Decoder for Raw {
    type Item = Bytes;
    type Error = Status;
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        let n = bytes::Buf::remaining(src);
        Ok(Some(bytes::Buf::copy_to_bytes(src, n)))
    }
}

/// A unary gRPC service, `test.Svc` (any method name), each call answered by `handler`.
#[derive(Clone)]
pub struct Unary<F>(pub F);

impl<F> tonic::server::NamedService for Unary<F> {
    const NAME: &'static str = "test.Svc";
}

type Answer = std::pin::Pin<
    Box<
        dyn std::future::Future<
                Output = Result<http::Response<tonic::body::Body>, std::convert::Infallible>,
            > + Send,
    >,
>;

impl<F, Fut> tower::Service<http::Request<tonic::body::Body>> for Unary<F>
where
    F: FnMut(tonic::Request<Bytes>) -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = Result<tonic::Response<Bytes>, Status>> + Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = std::convert::Infallible;
    type Future = Answer;

    fn poll_ready(
        &mut self,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<tonic::body::Body>) -> Answer {
        let handler = tower::service_fn(self.0.clone());
        Box::pin(async move { Ok(tonic::server::Grpc::new(Raw).unary(handler, req).await) })
    }
}

/// A tonic server on a loopback port serving [`Unary`]`(handler)`: its address.
pub async fn serve<F, Fut>(handler: F) -> std::net::SocketAddr
where
    F: FnMut(tonic::Request<Bytes>) -> Fut + Clone + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<tonic::Response<Bytes>, Status>> + Send + 'static,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let incoming = tonic::transport::server::TcpIncoming::from(listener);
    let server = tonic::transport::Server::builder()
        .add_service(Unary(handler))
        .serve_with_incoming(incoming);
    tokio::spawn(server);
    addr
}
