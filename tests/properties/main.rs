//! Properties over whole input spaces (proptest), one test binary: `Backoff` and full jitter
//! for every input, and `Retry-After` (feature `http`) for every value.

mod backoff;
#[cfg(feature = "http")]
mod retry_after;
