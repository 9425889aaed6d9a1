use retry_jitter::retry;

// Not `Clone`.
struct Builder(u32);

impl Builder {
    // The return type is `Self`: still one error, at `self`, for a `Self` that is not `Clone`.
    #[retry(attempts = 2)]
    fn bump(self) -> Result<Self, String> {
        Ok(Builder(self.0 + 1))
    }
}

fn main() {
    let _ = Builder(1).bump();
}
