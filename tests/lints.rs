//! Generated code is lint-clean: CI runs clippy on this file with pedantic lints denied, and
//! rustc with `warnings` and `unused_qualifications` denied.
#![deny(warnings, unused_qualifications, clippy::pedantic)]

use retry_jitter::{retry, Decision, Policy, RetryEvent};

#[derive(Debug, Clone, PartialEq, Eq)]
struct Error(u32);

fn classify(e: &Error) -> Decision {
    Decision::from(e.0 >= 500)
}

fn log(e: &Error, ev: &RetryEvent) {
    eprintln!("{}: {e:?} ({:?})", ev.function, ev.delay);
}

struct Client {
    policy: Policy,
    seen: Vec<u32>,
}

impl Client {
    #[retry(policy = self.policy, on = classify, notify = log)]
    fn call(&mut self, id: u32, tag: String) -> Result<String, Error> {
        self.seen.push(id);
        if self.seen.len() < 2 {
            return Err(Error(503));
        }
        Ok(tag)
    }

    #[retry(base = "0ns", attempts = 2)]
    async fn call_async(&self, id: &u32) -> Result<u32, Error> {
        Ok(*id + u32::try_from(self.seen.len()).map_err(|_| Error(0))?)
    }

    #[retry(base = "0ns", attempts = 3)]
    async fn call_inline(&self, id: &str) -> Result<u32, Error> {
        if id.is_empty() {
            return Err(Error(400));
        }
        let n: u32 = id.parse().map_err(|_| Error(0))?;
        Ok(u32::try_from(self.seen.len()).map_err(|_| Error(0))?.max(n))
    }
}

#[tokio::test]
async fn lint_clean_expansions_still_retry() {
    let mut c = Client {
        policy: Policy::new().with_base(std::time::Duration::ZERO),
        seen: Vec::new(),
    };
    assert_eq!(c.call(1, "a".to_owned()), Ok("a".to_owned()));
    assert_eq!(c.seen, [1, 1]);
    assert_eq!(c.call_async(&1).await, Ok(3));
    assert_eq!(c.call_inline("1").await, Ok(2));
    assert_eq!(c.call_inline("").await, Err(Error(400)));
}
