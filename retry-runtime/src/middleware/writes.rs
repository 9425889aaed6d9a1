//! Which requests a middleware may send twice: the request's method and idempotency key, and
//! the builder's [`idempotent`](super::builder::RetryBuilder::idempotent) and
//! [`idempotency_key`](super::builder::RetryBuilder::idempotency_key) (RFC 9110 §9.2.2).

use http::{HeaderMap, HeaderValue, Method};

use crate::classify::headers::{IDEMPOTENCY_KEY, IDEMPOTENCY_KEYS};
use crate::http::is_repeatable;
use crate::policy::Resend;

/// What a builder was told of the requests it sends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Writes {
    /// By each request's method and idempotency key ([`is_repeatable`]).
    #[default]
    ByMethod,
    /// Every request is safe to send again (`.idempotent()`).
    Idempotent,
    /// A request of a non-idempotent method without a key gets one (`.idempotency_key()`).
    Keyed,
}

/// Under [`Writes::Keyed`], a request of a non-idempotent method without a key is given one.
///
/// An empty or blank key is none.
///
/// Called before its first attempt, so every attempt sends the same key.
#[cfg(any(test, feature = "reqwest-middleware"))]
#[inline]
pub(crate) fn add_key(writes: Writes, method: &Method, headers: &mut HeaderMap) {
    if needs_key(writes, method, headers) {
        give_key(headers);
    }
}

/// Whether [`add_key`] gives a request of `method` with `headers` a key.
///
/// For a face whose request lends its method and its headers only one at a time
/// (`http::Request`).
#[inline]
pub(crate) fn needs_key(writes: Writes, method: &Method, headers: &HeaderMap) -> bool {
    writes == Writes::Keyed && !is_repeatable(method, headers)
}

/// The key [`add_key`] gives a request that has none.
///
/// In place of an empty or blank key the caller set, it goes under that key's name, the one its
/// server reads.
///
/// Else it goes as `Idempotency-Key`.
pub(crate) fn give_key(headers: &mut HeaderMap) {
    let key = new_key();
    let mut replaced = false;
    for name in IDEMPOTENCY_KEYS {
        if headers.contains_key(name) {
            headers.insert(name, key.clone());
            replaced = true;
        }
    }
    if !replaced {
        headers.insert(IDEMPOTENCY_KEY, key);
    }
}

/// How a request of `method` with `headers` (its key added by [`add_key`]) may be sent again.
pub(crate) fn resend(writes: Writes, method: &Method, headers: &HeaderMap) -> Resend {
    if writes == Writes::Idempotent || is_repeatable(method, headers) {
        Resend::Any
    } else {
        Resend::IfNotApplied
    }
}

/// A random version-4 UUID, hyphenated, from the operating system's entropy.
///
/// Never from the jitter's generator, which `testing::seed_jitter` makes repeatable.
///
/// Two calls sharing a key would have the server drop the second as a duplicate: a lost write.
pub(crate) fn new_key() -> HeaderValue {
    let mut b = [0u8; 16];
    if getrandom::fill(&mut b).is_err() {
        // No OS entropy (never seen on the platforms tokio runs on): std's hasher keys.
        //
        // Those come from the OS once per thread, and differ per `RandomState`.
        use std::hash::{BuildHasher, RandomState};
        let (hi, lo) = (
            RandomState::new().hash_one(0u8),
            RandomState::new().hash_one(1u8),
        );
        b[..8].copy_from_slice(&hi.to_le_bytes());
        b[8..].copy_from_slice(&lo.to_le_bytes());
    }
    b[6] = (b[6] & 0x0f) | 0x40; // version 4
    b[8] = (b[8] & 0x3f) | 0x80; // RFC 4122 variant
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = [0u8; 36];
    let mut at = 0;
    for (i, byte) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s[at] = b'-';
            at += 1;
        }
        s[at] = HEX[usize::from(byte >> 4)];
        s[at + 1] = HEX[usize::from(byte & 0x0f)];
        at += 2;
    }
    HeaderValue::from_bytes(&s).expect("hex digits and hyphens are a valid header value")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_a_hyphenated_version_4_uuid_and_new_each_time() {
        let (a, b) = (new_key(), new_key());
        assert_ne!(a, b);
        let s = a.to_str().unwrap();
        assert_eq!(s.len(), 36);
        let groups: Vec<_> = s.split('-').map(str::len).collect();
        assert_eq!(groups, [8, 4, 4, 4, 12]);
        assert_eq!(&s[14..15], "4");
        assert!(matches!(&s[19..20], "8" | "9" | "a" | "b"));
        assert!(s
            .chars()
            .all(|c| c == '-' || c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
    }

    #[test]
    fn keys_do_not_repeat_when_the_jitter_is_seeded() {
        // Two processes (or tests) seeding the jitter alike must not share keys: the server
        // would drop the second call as a duplicate.
        crate::testing::seed_jitter(7);
        let a = new_key();
        crate::testing::seed_jitter(7);
        assert_ne!(a, new_key());
    }

    #[test]
    fn x_idempotency_key_counts_as_a_key() {
        let mut h = HeaderMap::new();
        h.insert("x-idempotency-key", HeaderValue::from_static("k"));
        assert_eq!(resend(Writes::ByMethod, &Method::PATCH, &h), Resend::Any);
        add_key(Writes::Keyed, &Method::PATCH, &mut h);
        assert!(
            !h.contains_key("idempotency-key"),
            "the caller's key is kept, none added"
        );
    }

    #[test]
    fn an_empty_or_blank_key_is_replaced_under_its_own_name() {
        for name in ["idempotency-key", "x-idempotency-key"] {
            for blank in ["", "  ", "\t"] {
                let mut h = HeaderMap::new();
                h.insert(name, HeaderValue::from_static(blank));
                assert_eq!(
                    resend(Writes::ByMethod, &Method::POST, &h),
                    Resend::IfNotApplied
                );
                add_key(Writes::Keyed, &Method::POST, &mut h);
                assert_eq!(
                    h.len(),
                    1,
                    "{name}: {blank:?} replaced, no second key: {h:?}"
                );
                assert_eq!(h[name].len(), 36, "a fresh key under {name}");
                assert_eq!(resend(Writes::Keyed, &Method::POST, &h), Resend::Any);
            }
        }
        // Both names blank: both get the one fresh key.
        let mut h = HeaderMap::new();
        h.insert("idempotency-key", HeaderValue::from_static(""));
        h.insert("x-idempotency-key", HeaderValue::from_static(" "));
        add_key(Writes::Keyed, &Method::PATCH, &mut h);
        assert_eq!(h["idempotency-key"], h["x-idempotency-key"]);
        assert_eq!(h["idempotency-key"].len(), 36);
    }

    #[test]
    fn a_write_is_resent_only_when_vouched_for_or_keyed() {
        let mut h = HeaderMap::new();
        let keyed = |method: &Method, h: &mut HeaderMap| {
            add_key(Writes::Keyed, method, h);
            resend(Writes::Keyed, method, h)
        };
        assert_eq!(resend(Writes::ByMethod, &Method::GET, &h), Resend::Any);
        assert_eq!(
            resend(Writes::ByMethod, &Method::POST, &h),
            Resend::IfNotApplied
        );
        assert_eq!(resend(Writes::Idempotent, &Method::PATCH, &h), Resend::Any);
        add_key(Writes::ByMethod, &Method::POST, &mut h);
        add_key(Writes::Idempotent, &Method::POST, &mut h);
        assert!(h.is_empty());
        assert_eq!(keyed(&Method::GET, &mut h), Resend::Any);
        assert!(h.is_empty(), "a GET gets no key");
        assert_eq!(keyed(&Method::POST, &mut h), Resend::Any);
        let key = h.get("idempotency-key").cloned().unwrap();
        // A key the caller set is kept as it is.
        assert_eq!(keyed(&Method::POST, &mut h), Resend::Any);
        assert_eq!(h.get("idempotency-key"), Some(&key));
        assert_eq!(h.len(), 1);
    }
}
