//! A `tracing` subscriber that records every event and span the crate emits, with their
//! metadata and their fields rendered, and checks that the metadata names the crate, never a
//! module or a file of the runtime (`tests/tracing/metadata.rs`, `tests/middleware/events.rs`).
#![allow(dead_code)] // each test file uses what it needs of it

use std::collections::HashSet;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tracing::callsite::Identifier;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};

/// One recorded event or span: its metadata and its fields, rendered.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub name: &'static str,
    pub level: Level,
    pub target: &'static str,
    pub module_path: Option<&'static str>,
    pub file: Option<&'static str>,
    pub line: Option<u32>,
    pub callsite: Identifier,
    pub fields: Vec<(String, String)>,
}

impl Recorded {
    fn new(meta: &'static Metadata<'static>, fields: Vec<(String, String)>) -> Self {
        Recorded {
            name: meta.name(),
            level: *meta.level(),
            target: meta.target(),
            module_path: meta.module_path(),
            file: meta.file(),
            line: meta.line(),
            callsite: meta.callsite(),
            fields,
        }
    }

    /// The value of the field `name`, rendered.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The fields' names, in their order.
    pub fn names(&self) -> Vec<&str> {
        self.fields.iter().map(|(n, _)| n.as_str()).collect()
    }
}

/// Every event and every span (as created) a subscriber is given, and every callsite it was
/// told of.
#[derive(Clone, Default)]
pub struct Recorder {
    events: Arc<Mutex<Vec<Recorded>>>,
    spans: Arc<Mutex<Vec<Recorded>>>,
    callsites: Arc<Mutex<HashSet<Identifier>>>,
    ids: Arc<AtomicU64>,
}

impl Recorder {
    /// The events, in their order.
    pub fn events(&self) -> Vec<Recorded> {
        self.events.lock().unwrap().clone()
    }

    /// The spans, in the order they were created.
    pub fn spans(&self) -> Vec<Recorded> {
        self.spans.lock().unwrap().clone()
    }

    /// The callsites registered with this subscriber.
    pub fn callsites(&self) -> HashSet<Identifier> {
        self.callsites.lock().unwrap().clone()
    }
}

struct Fields<'a>(&'a mut Vec<(String, String)>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0.push((field.name().to_owned(), format!("{value:?}")));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.push((field.name().to_owned(), value.to_owned()));
    }
}

/// Whether `meta` is the crate's, or claims to be: its target or its module path names it
/// (a runtime module path, `retry_jitter_runtime::…`, does too, and fails the checks). What
/// other crates emit (hyper's client, on a test's loopback calls) is not recorded.
fn ours(meta: &Metadata<'_>) -> bool {
    meta.target().starts_with("retry_jitter")
        || meta
            .module_path()
            .is_some_and(|m| m.starts_with("retry_jitter"))
}

impl Subscriber for Recorder {
    fn register_callsite(&self, meta: &'static Metadata<'static>) -> Interest {
        if !ours(meta) {
            return Interest::never();
        }
        self.callsites.lock().unwrap().insert(meta.callsite());
        Interest::always()
    }
    fn enabled(&self, meta: &Metadata<'_>) -> bool {
        ours(meta)
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let mut fields = Vec::new();
        span.record(&mut Fields(&mut fields));
        let recorded = Recorded::new(span.metadata(), fields);
        self.spans.lock().unwrap().push(recorded);
        Id::from_u64(self.ids.fetch_add(1, Ordering::Relaxed) + 1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = Vec::new();
        event.record(&mut Fields(&mut fields));
        let recorded = Recorded::new(event.metadata(), fields);
        self.events.lock().unwrap().push(recorded);
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

/// What `f` emits, recorded with every event's and span's metadata checked
/// ([`assert_from_the_crate`]).
pub fn record(f: impl FnOnce()) -> Recorder {
    let recorder = Recorder::default();
    tracing::subscriber::with_default(recorder.clone(), f);
    for recorded in recorder.events().iter().chain(&recorder.spans()) {
        assert_from_the_crate(recorded);
    }
    recorder
}

/// `f`'s events, each checked for what its metadata says of its origin.
pub fn capture(f: impl FnOnce()) -> Vec<Recorded> {
    record(f).events()
}

/// The metadata names the crate, never a module or a file of the runtime.
pub fn assert_from_the_crate(event: &Recorded) {
    assert_eq!(event.target, "retry_jitter", "{event:#?}");
    assert!(
        matches!(event.module_path, None | Some("retry_jitter")),
        "the module path is the crate's, not the runtime's: {event:#?}"
    );
    if let Some(file) = event.file {
        assert!(
            !file.contains("retry-runtime") && !file.contains("retry_runtime"),
            "no file of the runtime: {event:#?}"
        );
    }
    assert!(
        event.file.is_some() || event.line.is_none(),
        "no line without a file: {event:#?}"
    );
    assert!(
        !event.name.contains(".rs") && !event.name.contains("retry-runtime"),
        "the event's name points at no source file: {event:#?}"
    );
}
