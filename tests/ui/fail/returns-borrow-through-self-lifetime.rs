use retry_jitter::retry;

struct Writer<'d> {
    dst: &'d mut String,
}

impl<'d> Writer<'d> {
    // Issue 17, class 7: `Self` carries `'d`, the lifetime of `dst`: the borrow is returned.
    #[retry]
    fn new(dst: &'d mut String) -> Result<Self, String> {
        dst.clear();
        Ok(Writer { dst })
    }
}

fn main() {
    let mut s = String::new();
    let _ = Writer::new(&mut s).map(|w| w.dst.len());
}
