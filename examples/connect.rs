//! `cargo run --example connect`: the database-failover shape in miniature. A sync
//! `TcpStream::connect` is retried (`ConnectionRefused` is transient) while the listener is not
//! up yet; it starts after 600 ms, and the retry that follows connects.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

use retry_jitter::{retry, RetryEvent};

fn log(e: &io::Error, ev: &RetryEvent) {
    println!(
        "  connect attempt {} failed ({}); retrying in {:?}",
        ev.attempt,
        e.kind(),
        ev.delay
    );
}

#[retry(attempts = 8, base = "100ms", cap = "1s", on = retry_jitter::transient, notify = log)]
fn connect(addr: SocketAddr) -> io::Result<TcpStream> {
    TcpStream::connect_timeout(&addr, Duration::from_secs(1))
}

fn main() -> io::Result<()> {
    // Reserve a free loopback port, then let it go: nothing listens there for now.
    let addr = TcpListener::bind("127.0.0.1:0")?.local_addr()?;
    let server = thread::spawn(move || -> io::Result<()> {
        thread::sleep(Duration::from_millis(600));
        let listener = TcpListener::bind(addr)?;
        println!("  (the server is up on {addr})");
        let (mut conn, _) = listener.accept()?;
        conn.write_all(b"hello from the recovered server")?;
        Ok(())
    });

    println!("connecting to {addr}, where nothing listens yet:");
    let started = Instant::now();
    let mut stream = connect(addr)?;
    let mut greeting = String::new();
    stream.read_to_string(&mut greeting)?;
    println!("connected after {:.0?}: {greeting:?}", started.elapsed());
    server.join().expect("the server thread")?;
    Ok(())
}
