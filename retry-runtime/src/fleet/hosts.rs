//! One [`DefaultBudget`] per host, in bounded memory: the budget a
//! [`RetryLayer`](crate::tower::RetryLayer) or a `RetryMiddleware` has unless given another.
//!
//! # The table
//!
//! [`HostBudgets::HOSTS`] slots, each filled once, by the first request to a host, and never
//! emptied.
//!
//! A host keeps its budget for the table's life, whatever other hosts come.
//!
//! Hosts beyond the bound share one *overflow* budget.
//!
//! Requests without an authority (a relative URI) share another.
//!
//! So memory is bounded, and no request can reset or take over another host's budget.
//!
//! A caller who chooses the requests' authorities (a proxy's client) can at most fill the free
//! slots, pushing later hosts into the overflow budget.
//!
//! A host is found by open addressing (linear probing, at most `HOSTS` probes).
//!
//! The hash is of its authority, case folded: an Fx-style multiply-rotate over eight bytes at a
//! time, no SipHash.
//!
//! A slot is a [`OnceLock`]: finding a host is an atomic load per probe and no lock.
//!
//! Filling a slot (a host's first request) allocates its entry: its name and its budget, under
//! a KiB.
//!
//! A name over 255 bytes goes to the overflow.
//!
//! An authority with a user's information (`user@host`) is filed under its host, on a slower
//! path; the user is never kept.

use core::fmt;
use std::sync::{Arc, OnceLock};

use super::DefaultBudget;

/// The longest host (with its port) given a budget of its own: a DNS name has at most 253
/// bytes.
///
/// A longer one shares the overflow budget, so a slot holds at most this much.
const LONGEST: usize = 255;

/// The multiplier of the hash (rustc-hash's).
const K: u64 = 0xf135_7aea_2e62_a9c5;

/// Every byte's ASCII case bit: `A` and `a` hash alike.
const FOLD: u64 = 0x2020_2020_2020_2020;

/// The little-endian word of `bytes` (1 to 7 of them), zeros past their end.
#[inline]
fn tail(bytes: &[u8]) -> u64 {
    let n = bytes.len();
    let four = |at: usize| {
        let mut w = [0; 4];
        w.copy_from_slice(&bytes[at..at + 4]);
        u64::from(u32::from_le_bytes(w))
    };
    if n >= 4 {
        // Two reads that overlap: each byte lands in its own place, whichever brings it.
        four(0) | four(n - 4) << ((n - 4) * 8)
    } else {
        let (a, b, c) = (bytes[0], bytes[n / 2], bytes[n - 1]);
        u64::from(a) | u64::from(b) << ((n / 2) * 8) | u64::from(c) << ((n - 1) * 8)
    }
}

/// The hash of an authority, ASCII case folded (a byte that is not a letter may collide
/// with another: entries are compared in full).
#[inline]
fn hash(key: &[u8]) -> u64 {
    let mut h = (key.len() as u64).wrapping_mul(K);
    let mut mix = |w: u64| h = (h.rotate_left(5) ^ (w | FOLD)).wrapping_mul(K);
    let mut words = key.chunks_exact(8);
    for w in &mut words {
        let mut word = [0; 8];
        word.copy_from_slice(w);
        mix(u64::from_le_bytes(word));
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        mix(tail(rest));
    }
    h
}

/// A host's slot: its authority and its budget.
struct Entry {
    hash: u64,
    host: Box<str>,
    budget: DefaultBudget,
}

impl Entry {
    #[inline]
    fn is(&self, hash: u64, host: &str) -> bool {
        self.hash == hash && (*self.host == *host || self.host.eq_ignore_ascii_case(host))
    }
}

/// The table a [`HostBudgets`] and its clones share.
struct Table {
    slots: [OnceLock<Box<Entry>>; HostBudgets::HOSTS],
    /// The hosts beyond the bound (and any host longer than [`LONGEST`]).
    overflow: DefaultBudget,
    /// The requests without an authority.
    no_host: DefaultBudget,
}

/// A [`DefaultBudget`] for each host a [`RetryLayer`](crate::tower::RetryLayer) or a
/// `RetryMiddleware` sends to.
///
/// The host is the request's authority: `host[:port]`, ASCII case aside.
///
/// It is what they have unless given another budget
/// ([`budget`](crate::builder::RetryBuilder::budget)) or none
/// ([`budget_none`](crate::builder::RetryBuilder::budget_none)).
///
/// A host that is down gets at most 20% of its calls retried, plus 10 retries a second.
///
/// The other hosts keep their own budgets whole.
///
/// Bounded: the first [`HOSTS`](HostBudgets::HOSTS) hosts each get a budget for the table's
/// life, never evicted or reset.
///
/// The hosts after them share one overflow budget; requests without an authority, one more.
///
/// The middleware's clones share the table (an [`Arc`]); finding a host's budget takes no lock.
///
/// ```
/// use retry_jitter::sleep;
/// use retry_jitter::budget::HostBudgets;
///
/// let hosts = HostBudgets::new();
/// let a = hosts.get(Some("api.example.com"));
/// assert!(std::ptr::eq(a, hosts.get(Some("API.example.com")))); // case aside, one host
/// assert!(!std::ptr::eq(a, hosts.get(Some("api.example.com:8443")))); // another port
/// assert!(std::ptr::eq(hosts.get(Some("user@api.example.com")), a)); // not the user
/// assert_eq!(a.available(sleep::now), 100); // the floor, to start with
/// assert_eq!(hosts.len(), 2);
/// ```
#[derive(Clone)]
pub struct HostBudgets(Arc<Table>);

impl HostBudgets {
    /// The hosts that get a budget of their own.
    pub const HOSTS: usize = 64;

    /// The index of the overflow budget.
    const OVERFLOW: u8 = Self::HOSTS as u8;
    /// The index of the budget of requests without an authority.
    const NO_HOST: u8 = Self::HOSTS as u8 + 1;

    /// An empty table: no host has a budget yet.
    ///
    /// ```
    /// let hosts = retry_jitter::budget::HostBudgets::new();
    /// assert_eq!(hosts.len(), 0);
    /// ```
    #[must_use]
    pub fn new() -> Self {
        HostBudgets(Arc::new(Table {
            slots: [const { OnceLock::new() }; Self::HOSTS],
            overflow: DefaultBudget::new(),
            no_host: DefaultBudget::new(),
        }))
    }

    /// The budget of the requests to `authority` (`None`: requests without one), given one
    /// if it has none yet and there is room (else the overflow budget).
    ///
    /// ```
    /// use retry_jitter::budget::HostBudgets;
    /// let hosts = HostBudgets::new();
    /// let relative = hosts.get(None);
    /// assert!(!std::ptr::eq(relative, hosts.get(Some("localhost:8080"))));
    /// ```
    pub fn get(&self, authority: Option<&str>) -> &DefaultBudget {
        self.budget(self.find(authority))
    }

    /// The number of hosts with a budget of their own (at most [`HOSTS`](HostBudgets::HOSTS)).
    ///
    /// ```
    /// let hosts = retry_jitter::budget::HostBudgets::new();
    /// for port in 0..100 {
    ///     hosts.get(Some(&format!("localhost:{port}")));
    /// }
    /// assert_eq!(hosts.len(), retry_jitter::budget::HostBudgets::HOSTS); // the rest: the overflow
    /// ```
    pub fn len(&self) -> usize {
        self.0.slots.iter().filter(|s| s.get().is_some()).count()
    }

    /// Whether no host has a budget of its own yet.
    ///
    /// ```
    /// assert!(retry_jitter::budget::HostBudgets::new().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The index of `authority`'s budget: its slot, filled if it was free; else the overflow.
    #[inline]
    pub(crate) fn find(&self, authority: Option<&str>) -> u8 {
        match authority {
            Some(host) => self.find_host(host),
            None => Self::NO_HOST,
        }
    }

    /// The index of `host`'s budget: [`find`](HostBudgets::find) of an authority.
    fn find_host(&self, host: &str) -> u8 {
        let hash = hash(host.as_bytes());
        let home = (hash >> (64 - Self::HOSTS.trailing_zeros())) as usize;
        for probe in 0..Self::HOSTS {
            let i = (home + probe) % Self::HOSTS;
            match self.0.slots[i].get() {
                Some(entry) if entry.is(hash, host) => return i as u8,
                Some(_) => {}
                None => return self.fill(i, hash, host),
            }
        }
        self.beyond(host)
    }

    /// An authority with a user's information (never in a slot: found by its host, on this
    /// path, as the `@` is rare), one too long, or one beyond the bound: the overflow.
    #[cold]
    #[inline(never)]
    fn beyond(&self, authority: &str) -> u8 {
        match authority.rfind('@') {
            Some(at) => self.find_host(&authority[at + 1..]),
            None => Self::OVERFLOW,
        }
    }

    /// The free slot `i` of `host`'s probe: given to it, unless another host took it first.
    ///
    /// Then the probe goes on.
    ///
    /// A host with a user's information, or too long, is given none.
    #[cold]
    #[inline(never)]
    fn fill(&self, i: usize, hash: u64, host: &str) -> u8 {
        if host.len() > LONGEST || host.contains('@') {
            return self.beyond(host);
        }
        let entry = self.0.slots[i].get_or_init(|| {
            Box::new(Entry {
                hash,
                host: host.into(),
                budget: DefaultBudget::new(),
            })
        });
        if entry.is(hash, host) {
            return i as u8;
        }
        // Another host took it: on from the slot after.
        for probe in 1..Self::HOSTS {
            let j = (i + probe) % Self::HOSTS;
            match self.0.slots[j].get() {
                Some(entry) if entry.is(hash, host) => return j as u8,
                Some(_) => {}
                None => return self.fill(j, hash, host),
            }
        }
        Self::OVERFLOW
    }

    /// The budget at `index` (a [`find`](HostBudgets::find)).
    #[inline]
    pub(crate) fn budget(&self, index: u8) -> &DefaultBudget {
        match self.0.slots.get(usize::from(index)).and_then(OnceLock::get) {
            Some(entry) => &entry.budget,
            None if index == Self::NO_HOST => &self.0.no_host,
            None => &self.0.overflow,
        }
    }
}

impl Default for HostBudgets {
    /// [`HostBudgets::new`].
    ///
    /// ```
    /// assert!(retry_jitter::budget::HostBudgets::default().is_empty());
    /// ```
    fn default() -> Self {
        HostBudgets::new()
    }
}

impl fmt::Debug for HostBudgets {
    /// The number of hosts, not their names: a middleware's `Debug` says nothing of where its
    /// requests went.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostBudgets")
            .field("hosts", &self.len())
            .finish_non_exhaustive()
    }
}

// Loom's atomics (the window's, under `--cfg loom`) work only inside its model.
#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::fleet::SharedBudget;

    /// The system clock, as the loops' `sleep::now` reads it (run/ is above this layer).
    mod sleep {
        pub(super) fn now() -> std::time::Instant {
            std::time::Instant::now()
        }
    }

    #[test]
    fn a_host_keeps_its_slot_whatever_comes_after() {
        let hosts = HostBudgets::new();
        let mine = hosts.find(Some("mine.example:443"));
        for i in 0..10_000 {
            hosts.find(Some(&format!("stranger-{i}.example")));
        }
        assert_eq!(hosts.find(Some("mine.example:443")), mine);
        assert_eq!(hosts.len(), HostBudgets::HOSTS);
        assert_eq!(
            hosts.find(Some("late.example")),
            HostBudgets::OVERFLOW,
            "a host after the bound shares the overflow"
        );
    }

    #[test]
    fn a_host_too_long_for_dns_shares_the_overflow() {
        let hosts = HostBudgets::new();
        let long = "a".repeat(LONGEST + 1);
        assert_eq!(hosts.find(Some(&long)), HostBudgets::OVERFLOW);
        assert!(hosts.is_empty());
    }

    #[test]
    fn threads_racing_for_one_host_share_one_budget() {
        let hosts = HostBudgets::new();
        let found: Vec<u8> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| s.spawn(|| hosts.find(Some("one.example"))))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(found.iter().all(|&i| i == found[0]));
        assert_eq!(hosts.len(), 1);
    }

    #[test]
    fn every_host_starts_at_the_floor() {
        let hosts = HostBudgets::new();
        for _ in 0..1_000 {
            hosts.get(Some("busy.example")).begin(sleep::now);
        }
        assert_eq!(hosts.get(Some("busy.example")).available(sleep::now), 300);
        assert_eq!(hosts.get(Some("idle.example")).available(sleep::now), 100);
        assert_eq!(hosts.get(None).available(sleep::now), 100);
    }

    #[test]
    fn the_hash_folds_ascii_case_only() {
        assert_eq!(hash(b"Example.COM:80"), hash(b"example.com:80"));
        assert_ne!(hash(b"example.com:80"), hash(b"example.com:81"));
        assert_ne!(hash(b"a"), hash(b"a\0"));
        for n in 0..=17 {
            let key: Vec<u8> = (0..n).map(|i| b'a' + i as u8).collect();
            let mut other = key.clone();
            if let Some(last) = other.last_mut() {
                *last = b'0';
                assert_ne!(hash(&key), hash(&other), "{n} bytes, the last one changed");
            }
        }
    }

    #[test]
    fn a_user_s_information_is_no_part_of_the_host() {
        let hosts = HostBudgets::new();
        let host = hosts.find(Some("api.example:443"));
        assert_eq!(hosts.find(Some("user:secret@api.example:443")), host);
        assert_eq!(hosts.find(Some("a@b@api.example:443")), host);
        // Nor is one kept: a first request with a user's information files the host alone.
        let other = hosts.find(Some("user@other.example"));
        assert_eq!(hosts.find(Some("other.example")), other);
        assert_eq!(hosts.len(), 2);
    }
}
