#![deny(dead_code)]

use retry_jitter::retry;

// The expansion keeps the function as the user wrote it: an unused one is still reported.
#[retry]
fn never_called() -> Result<u32, String> {
    Ok(1)
}

fn main() {}
