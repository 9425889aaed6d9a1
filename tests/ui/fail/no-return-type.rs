use retry_jitter::retry;

#[retry]
fn fetch() {
    println!("fetching");
}

fn main() {
    fetch();
}
