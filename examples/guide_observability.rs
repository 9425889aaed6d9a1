use std::io;
use std::sync::atomic::{AtomicU32, Ordering};

use metrics_exporter_prometheus::PrometheusBuilder;
use retry_jitter::retry;
use tracing_subscriber::EnvFilter;

static CALLS: AtomicU32 = AtomicU32::new(0);

// Fails twice, then answers: two `retrying` events (WARN), one `recovered` (INFO).
#[retry(attempts = 4, base = "20ms", on = retry_jitter::transient)]
async fn fetch_config(name: &str) -> io::Result<String> {
    match CALLS.fetch_add(1, Ordering::SeqCst) {
        0 | 1 => Err(io::Error::new(
            io::ErrorKind::ConnectionReset,
            "connection reset",
        )),
        _ => Ok(format!("{name}: ok")),
    }
}

// Never answers: three `retrying` events, then `giving up` with `reason = attempts`.
#[retry(attempts = 4, base = "20ms", on = retry_jitter::transient)]
async fn fetch_flags() -> io::Result<String> {
    Err(io::Error::new(
        io::ErrorKind::ConnectionRefused,
        "connection refused",
    ))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Logs: `RUST_LOG=retry_jitter=debug` (or `=warn` for retries and give-ups alone).
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| EnvFilter::new("retry_jitter=debug")),
        )
        .init();
    // Metrics: any exporter of the `metrics` facade; Prometheus's text here.
    let prometheus = PrometheusBuilder::new().install_recorder()?;

    println!("{}", fetch_config("app.toml").await?);
    println!("{}", fetch_flags().await.unwrap_err());

    println!("\nwhat a Prometheus scrape of /metrics would read:");
    for line in prometheus
        .render()
        .lines()
        .filter(|l| l.starts_with("retry_jitter") && !l.contains("quantile"))
    {
        println!("  {line}");
    }
    Ok(())
}
