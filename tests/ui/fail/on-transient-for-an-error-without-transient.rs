// `on = retry_jitter::transient` on an error type with no `Transient` impl: a compile error,
// which the HTTP guide's recipe gives as its reason to write the key (without `on`, such an
// error type is retried whatever it is).
use retry_jitter::retry;

#[retry(on = retry_jitter::transient)]
fn fetch() -> Result<u32, String> {
    Err("down".to_owned())
}

fn main() {
    let _ = fetch();
}
