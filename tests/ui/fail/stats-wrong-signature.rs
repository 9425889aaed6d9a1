use retry_jitter::retry;

fn log(calls: u32) {
    eprintln!("{calls}");
}

#[retry(stats = log)]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

#[retry(stats = |s: &String| eprintln!("{s}"))]
fn fetch_closure() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
    let _ = fetch_closure();
}
