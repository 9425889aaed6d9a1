use retry_jitter::retry;

macro_rules! fail {
    ($e:expr) => {
        return Err($e)
    };
}

// `#[track_caller]` needs the attempt written in the function, and a macro of the user's may
// hide a `return` no rewriting reaches: one error, on the macro.
#[retry(attempts = 3)]
#[track_caller]
fn fetch(id: u32) -> Result<u32, String> {
    if id == 0 {
        fail!("no id".to_owned());
    }
    Ok(id)
}

fn main() {
    let _ = fetch(1);
}
