//! `cargo run --example failover --features reqwest`: polling and failover with `on_ok` and
//! `attempt = n`, against real HTTP servers on loopback.
//!
//! Three replicas of a job service listen on 127.0.0.1; the first is down (its port refuses
//! connections). `submit` tries the replicas in turn — attempt `n` goes to
//! `endpoints[(n - 1) % 3]` — and tells each one how many attempts came before it in an
//! `x-retry-attempt` header (as gRPC's `grpc-previous-rpc-attempts` does). `wait_done` then
//! polls the job until it is done: the replica answers `200 pending` twice, and `on_ok` retries
//! that `Ok` value like a failure, with the same backoff.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::{get, post};
use axum::Router;
use retry_jitter::reqwest::{check, Error};
use retry_jitter::retry;

/// One replica: the `x-retry-attempt` headers it saw, and its job's polls.
#[derive(Clone, Default)]
struct Replica {
    seen: Arc<Mutex<Vec<String>>>,
    polls: Arc<AtomicU32>,
}

async fn start_replica(replica: Replica) -> std::io::Result<SocketAddr> {
    let app = Router::new()
        .route(
            "/jobs",
            post(|State(r): State<Replica>, headers: HeaderMap| async move {
                let attempt = headers
                    .get("x-retry-attempt")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("missing")
                    .to_owned();
                r.seen.lock().unwrap().push(attempt);
                "job-1"
            }),
        )
        .route(
            "/jobs/job-1",
            get(|State(r): State<Replica>| async move {
                if r.polls.fetch_add(1, Ordering::Relaxed) < 2 {
                    "pending"
                } else {
                    "done"
                }
            }),
        )
        .with_state(replica);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(addr)
}

/// A loopback address nothing listens on: a replica that is down.
async fn down_replica() -> std::io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    listener.local_addr()
}

/// Submit the job to the next replica on each attempt: a refused connection is retried
/// (`transient`), on the replica after it.
#[retry(attempts = 3, base = "20ms", on = retry_jitter::transient, attempt = n)]
async fn submit(client: &reqwest::Client, endpoints: &[String]) -> Result<(String, String), Error> {
    let endpoint = &endpoints[(n - 1) as usize % endpoints.len()];
    let resp = client
        .post(format!("{endpoint}/jobs"))
        .header("x-retry-attempt", (n - 1).to_string())
        .send()
        .await?;
    Ok((endpoint.clone(), check(resp).await?.text().await?))
}

/// Poll the job until it is done: a `200 pending` is an `Ok` that `on_ok` retries.
#[retry(attempts = 10, base = "50ms", cap = "1s", on = retry_jitter::transient, on_ok = |status: &String| status == "pending")]
async fn wait_done(client: &reqwest::Client, job_url: &str) -> Result<String, Error> {
    let resp = client.get(job_url).send().await?;
    Ok(check(resp).await?.text().await?)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (b, c) = (Replica::default(), Replica::default());
    let (b_addr, c_addr) = (
        start_replica(b.clone()).await?,
        start_replica(c.clone()).await?,
    );
    // Picked once the others listen, so that the port freed is none of theirs.
    let endpoints: Vec<String> = [down_replica().await?, b_addr, c_addr]
        .iter()
        .map(|addr| format!("http://{addr}"))
        .collect();
    println!(
        "replicas: {} (down), {}, {}",
        endpoints[0], endpoints[1], endpoints[2]
    );

    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(2))
        .build()?;
    let (endpoint, job) = submit(&client, &endpoints).await?;
    println!("submitted {job} to {endpoint} (replica 1 refused the first attempt)");
    assert_eq!(
        endpoint, endpoints[1],
        "the second attempt goes to the second replica"
    );
    assert_eq!(*b.seen.lock().unwrap(), ["1"], "one attempt came before it");
    assert!(c.seen.lock().unwrap().is_empty());

    let started = Instant::now();
    let status = wait_done(&client, &format!("{endpoint}/jobs/{job}")).await?;
    println!(
        "job {job} is {status} after {} polls, {:?}",
        b.polls.load(Ordering::Relaxed),
        started.elapsed()
    );
    assert_eq!(status, "done");
    assert_eq!(b.polls.load(Ordering::Relaxed), 3, "pending, pending, done");
    Ok(())
}
