//! The server's side of an HTTP/2 connection (prior knowledge), frame by frame, for servers
//! that h2's own cannot play: one that reads a request whole and then goes away or closes.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Sends the server's preface (an empty SETTINGS frame), reads the client's, then reads frames
/// until a request's HEADERS or DATA ends its stream: that request was received whole.
pub async fn read_request(conn: &mut TcpStream) -> std::io::Result<()> {
    conn.write_all(&[0, 0, 0, 4, 0, 0, 0, 0, 0]).await?;
    let mut preface = [0u8; 24];
    conn.read_exact(&mut preface).await?;
    assert_eq!(&preface, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
    loop {
        let mut head = [0u8; 9];
        conn.read_exact(&mut head).await?;
        let len = u32::from_be_bytes([0, head[0], head[1], head[2]]) as usize;
        let (kind, flags) = (head[3], head[4]);
        let stream = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
        let mut payload = vec![0u8; len];
        conn.read_exact(&mut payload).await?;
        // DATA or HEADERS, with END_STREAM, on a stream.
        if matches!(kind, 0 | 1) && flags & 0x1 != 0 && stream != 0 {
            return Ok(());
        }
    }
}

/// A GOAWAY frame: the last stream the server processed, its error code, its debug data.
pub fn go_away(last_stream_id: u32, error_code: u32, debug: &[u8]) -> Vec<u8> {
    let len = 8 + u32::try_from(debug.len()).expect("a short debug text");
    let mut frame = len.to_be_bytes()[1..].to_vec();
    frame.extend_from_slice(&[7, 0, 0, 0, 0, 0]);
    frame.extend_from_slice(&last_stream_id.to_be_bytes());
    frame.extend_from_slice(&error_code.to_be_bytes());
    frame.extend_from_slice(debug);
    frame
}

/// Closes the server's side, then reads what the client still sends until it closes its own:
/// closing with bytes unread would reset the connection instead, and the client might see the
/// reset before the frames sent ahead of it.
pub async fn close(mut conn: TcpStream) {
    let _ = conn.shutdown().await;
    let mut rest = [0u8; 1024];
    while let Ok(1..) = conn.read(&mut rest).await {}
}

/// A loopback listener that runs `each` on every connection it accepts, in a task of its own:
/// the raw servers' accept loop, written once.
pub async fn serve_each<F, Fut>(each: F) -> std::net::SocketAddr
where
    F: Fn(TcpStream) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        loop {
            let (conn, _) = listener.accept().await.unwrap();
            tokio::spawn(each(conn));
        }
    });
    addr
}
