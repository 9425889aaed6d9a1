use retry_jitter::retry;

/// Docs stay on the function.
#[retry(base = "0ns")]
#[must_use]
#[inline]
#[cfg_attr(test, allow(dead_code))]
pub fn fetch(#[cfg(all())] id: u32) -> Result<u32, ()> {
    Ok(id)
}

mod inner {
    use retry_jitter::retry;

    #[retry(base = "0ns")]
    pub(crate) fn visible() -> Result<(), ()> {
        Ok(())
    }
}

fn main() {
    assert_eq!(fetch(3), Ok(3));
    assert_eq!(inner::visible(), Ok(()));
}
