//! An axum app served on a loopback port (real sockets, 127.0.0.1 only), for the tests whose
//! servers answer on a port of their own.

use std::net::SocketAddr;

/// Serve `app` on a free loopback port, on a task of its own; the port's address.
pub async fn serve(app: axum::Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a free loopback port");
    let addr = listener.local_addr().expect("a bound listener's address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}
