use retry_jitter::retry;

// `String` is not the user's type: `impl From<TimedOut> for String` is forbidden (E0117), so
// the note must offer a wrapper or `std::io::Error`.
#[retry(timeout = "1s")]
async fn fetch(id: u64) -> Result<(), String> {
    if id == 0 { Err("gone".into()) } else { Ok(()) }
}

fn main() {
    let _ = fetch(1);
}
