use retry_jitter::retry;

// In a sync fn too: rustc's own error, not one about a closure the user never wrote.
#[retry(attempts = 3)]
fn fetch(id: u32) -> Result<u32, String> {
    if id == 0 {
        break;
    }
    Ok(id)
}

fn main() {
    let _ = fetch(1);
}
