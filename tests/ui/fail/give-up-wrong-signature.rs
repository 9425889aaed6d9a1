use retry_jitter::retry;

fn log(e: &String) {
    eprintln!("{e}");
}

#[retry(give_up = log)]
fn fetch() -> Result<u32, String> {
    Ok(1)
}

fn main() {
    let _ = fetch();
}
