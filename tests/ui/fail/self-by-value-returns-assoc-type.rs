use retry_jitter::retry;

// Not `Clone`.
struct Doc;

#[derive(Debug)]
struct Error;

trait Parse {
    type Output;
    fn parse(self) -> Result<Self::Output, Error>;
}

impl Parse for Doc {
    type Output = u32;

    // The return type names `Self`, where it may hold a borrow of a `Self` that is a `&mut`:
    // still one error, at `self`, for a `Self` that is not `Clone`.
    #[retry(attempts = 2)]
    fn parse(self) -> Result<Self::Output, Error> {
        let _doc = self;
        Ok(1)
    }
}

fn main() {
    let _ = Doc.parse();
}
