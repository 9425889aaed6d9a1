use retry_jitter::retry;

// Each attempt re-borrows `cache`; the borrow checker cannot see that the attempt which returns
// is the last, so a borrow of it cannot be returned.
#[retry]
fn first(cache: &mut Vec<String>) -> Result<&str, String> {
    cache.first().map(String::as_str).ok_or_else(|| "empty".to_owned())
}

fn main() {
    let mut cache = vec!["a".to_owned()];
    let _ = first(&mut cache);
}
