//! The trace a retry loop reports to: the [`Trace`] events and [`Unset`].
//!
//! With feature `tracing`, the `Tracer` emits them as `tracing` events.

use crate::policy::Unset;
use crate::policy::{GiveUp, RetryEvent};

/// Trace events for retries and give-ups (feature `tracing`); [`Unset`] emits nothing.
///
/// `R` is the failed call's outcome (its `Result`): a trace sees the error through it.
///
/// So its type depends on the function's return type alone.
///
/// ```
/// use retry_jitter::hooks::Unset;
/// use retry_jitter::__private::Trace;
/// # let _ = &Unset as &dyn Trace<Result<(), ()>>;
/// ```
pub trait Trace<R> {
    /// `true` for a trace that emits nothing ([`Unset`]): the loops then skip what they
    /// would compute only for it.
    #[inline]
    fn is_silent(&self) -> bool {
        false
    }
    /// A failed call's `outcome` is about to be retried after `event.delay`.
    fn retry(&self, outcome: &R, event: &RetryEvent);
    /// Retrying ended with `outcome`.
    fn give_up(&self, outcome: &R, give_up: &GiveUp);
    /// A hedge starts (`hedge = …`): call number `event.attempt` has not answered within
    /// `event.delay`.
    fn hedge(&self, event: &RetryEvent) {
        let _ = event;
    }
    /// A call of `function` succeeded on its call number `calls`, after failed (or hedged)
    /// ones.
    ///
    /// `elapsed` is since the call began.
    ///
    /// A call without `max_elapsed` keeps no start time: then it is since its first call failed.
    fn recovered(&self, function: &'static str, calls: u32, elapsed: core::time::Duration) {
        let _ = (function, calls, elapsed);
    }
}

impl<R> Trace<R> for Unset {
    #[inline]
    fn is_silent(&self) -> bool {
        true
    }
    #[inline]
    fn retry(&self, _: &R, _: &RetryEvent) {}
    #[inline]
    fn give_up(&self, _: &R, _: &GiveUp) {}
}

#[cfg(feature = "tracing")]
pub use tracer::{tracer, Level, Render, Rendered, Tracer, Unrendered};

#[cfg(feature = "tracing")]
pub(crate) use tracer::breaker_changed;
// What the middleware faces emit: with one of them.
#[cfg(all(
    feature = "tracing",
    any(feature = "tower", feature = "reqwest-middleware")
))]
pub(crate) use tracer::attempt_span;
// The faces call it where the write rule keeps a request from being sent again.
//
// In progress: drop the `allow` once they do.
#[cfg(all(
    feature = "tracing",
    any(feature = "tower", feature = "reqwest-middleware")
))]
pub(crate) use tracer::not_sent_again;

/// The `tracing` events.
#[cfg(feature = "tracing")]
mod tracer {
    use core::fmt::{Debug, Display};

    use super::Trace;
    use crate::fleet::BreakerState;
    use crate::policy::{GiveUp, RetryEvent};

    pub use tracing::Level;

    /// An error as a trace event shows it: through `Display` if its type has it, else `Debug`,
    /// else not at all.
    ///
    /// Chosen at compile time by `#[retry]`, with no bound on the error type.
    #[derive(Clone, Copy)]
    pub enum Rendered<'a> {
        /// Shown with `Display`.
        Display(&'a dyn Display),
        /// Shown with `Debug`.
        Debug(&'a dyn Debug),
        /// An `Ok` value `on_ok` retried, shown with `Debug`.
        Value(&'a dyn Debug),
        /// Not shown.
        Nothing,
    }

    /// How a [`Tracer`] shows the error in a failed call's outcome `R`: a function pointer
    /// `fn(&R) -> Rendered` (what `#[retry]` picks), or [`Unrendered`].
    pub trait Render<R> {
        /// The error as the event shows it.
        fn render<'e>(&self, outcome: &'e R) -> Rendered<'e>;
    }

    impl<R> Render<R> for for<'e> fn(&'e R) -> Rendered<'e> {
        fn render<'e>(&self, outcome: &'e R) -> Rendered<'e> {
            self(outcome)
        }
    }

    /// The error's renderer, then the value's (for an `Ok` that `on_ok` retried).
    ///
    /// `#[retry]` picks it when the function has `on_ok`.
    impl<R> Render<R>
        for (
            for<'e> fn(&'e R) -> Rendered<'e>,
            for<'e> fn(&'e R) -> Rendered<'e>,
        )
    {
        fn render<'e>(&self, outcome: &'e R) -> Rendered<'e> {
            match (self.0)(outcome) {
                Rendered::Nothing => (self.1)(outcome),
                shown => shown,
            }
        }
    }

    /// Events without the error: for the closure API, which knows nothing of its type.
    ///
    /// ```
    /// use retry_jitter::__private::{tracer, Level, Trace, Unrendered};
    /// # let t = tracer(Level::WARN, Unrendered);
    /// # let _ = &t as &dyn Trace<Result<(), String>>;
    /// ```
    #[derive(Clone, Copy, Debug, Default)]
    pub struct Unrendered;

    impl<R> Render<R> for Unrendered {
        fn render<'e>(&self, _: &'e R) -> Rendered<'e> {
            Rendered::Nothing
        }
    }

    /// Trace events at `level`, the error shown by `render`.
    ///
    /// ```
    /// use retry_jitter::__private::{tracer, Level, Rendered, Trace};
    /// fn show(r: &Result<(), String>) -> Rendered<'_> {
    ///     r.as_ref().err().map_or(Rendered::Nothing, |e| Rendered::Display(e))
    /// }
    /// let t = tracer(Level::WARN, show as fn(&Result<(), String>) -> Rendered<'_>);
    /// # let _ = &t as &dyn Trace<Result<(), String>>;
    /// ```
    #[derive(Clone, Copy, Debug)]
    pub struct Tracer<F> {
        level: Level,
        render: F,
    }

    /// A [`Tracer`]: each retry and each give-up is an event at `level`.
    ///
    /// The level is WARN by default in `#[retry]`; the target is `retry_jitter`.
    ///
    /// Fields: `function`, `attempt`, `delay_ms` (whole milliseconds, a `u64`) or `reason` and
    /// `calls`.
    ///
    /// The error is shown as `render` shows it.
    ///
    /// ```
    /// use retry_jitter::__private::{tracer, Level, Rendered};
    /// let t = tracer(Level::INFO, retry_jitter::__private::Unrendered);
    /// # let _ = t;
    /// ```
    pub fn tracer<F>(level: Level, render: F) -> Tracer<F> {
        Tracer { level, render }
    }

    /// The target of every event (and span) the crate emits: the crate's name.
    ///
    /// Not the module an event happens to be written in: `RUST_LOG=retry_jitter=debug` shows
    /// them all.
    ///
    /// It is the events' module path too, and they name no file nor line.
    ///
    /// A subscriber that prints where an event comes from (`.with_file(true)`, JSON) shows the
    /// crate, not the runtime's insides.
    const TARGET: &str = "retry_jitter";

    /// A duration in whole milliseconds (rounded down, saturating).
    ///
    /// What `delay_ms` and `elapsed_ms` show: `2` rather than `2.2566859999999997`.
    fn whole_ms(d: core::time::Duration) -> u64 {
        u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
    }

    // `tracing::event!` writes the call site's module path, file and line into its event's
    // metadata, and cannot be told otherwise.
    //
    // So the events' callsites are written here by hand, as the macro writes its own.
    //
    // Each is a `static` `DefaultCallsite`, registered on its first use, its `Interest` cached.
    //
    // Its `static` `Metadata` says `TARGET` for target and module path, and no file nor line.
    //
    // A callsite has one level, chosen at run time: each kind of event has five, one per level.
    //
    // The one span, a face's `retry_attempt`, has its callsite here too.

    use tracing::callsite::{Callsite as _, DefaultCallsite, Identifier};
    use tracing::field::{Field, FieldSet, Value};
    use tracing::level_filters::{LevelFilter, STATIC_MAX_LEVEL};
    use tracing::metadata::Kind;
    #[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
    use tracing::Span;
    use tracing::{Event, Metadata};

    /// One kind of event's callsites, one per level (ERROR, WARN, INFO, DEBUG, TRACE).
    ///
    /// Each has the same `N` fields: an event is given `N` values, or does not compile.
    struct Sites<const N: usize>([DefaultCallsite; 5]);

    impl<const N: usize> Sites<N> {
        /// The callsite at `level`.
        #[inline]
        fn at(&'static self, level: Level) -> &'static DefaultCallsite {
            &self.0[match level {
                Level::ERROR => 0,
                Level::WARN => 1,
                Level::INFO => 2,
                Level::DEBUG => 3,
                _ => 4,
            }]
        }

        /// The fields of `site` (one of these callsites), in their order.
        fn fields(&'static self, site: &'static DefaultCallsite) -> [Field; N] {
            let mut fields = site.metadata().fields().iter();
            core::array::from_fn(|_| fields.next().expect("N fields"))
        }
    }

    /// Each of `fields` with its value, for `FieldSet::value_set`.
    fn pairs<'a, const N: usize>(
        fields: &'a [Field; N],
        values: [&'a dyn Value; N],
    ) -> [(&'a Field, Option<&'a dyn Value>); N] {
        core::array::from_fn(|i| (&fields[i], Some(values[i])))
    }

    /// The metadata of an event (or a span: `kind`): named `name`, at `level`, with the
    /// `fields` of the callsite `site`.
    const fn metadata(
        name: &'static str,
        level: Level,
        fields: &'static [&'static str],
        kind: Kind,
        site: &'static DefaultCallsite,
    ) -> Metadata<'static> {
        Metadata::new(
            name,
            TARGET,
            level,
            None,
            None,
            Some(TARGET),
            // What `tracing_core::identify_callsite!` writes.
            FieldSet::new(fields, Identifier(site)),
            kind,
        )
    }

    /// `static $sites: Sites<N>`, the callsites of the event `$name` with its `N` fields.
    ///
    /// The fields are in the order [`event!`] is given their values.
    macro_rules! sites {
        ($($sites:ident = $name:literal: $($field:ident),+;)+) => {$(
            static $sites: Sites<{ [$(stringify!($field)),+].len() }> = {
                const FIELDS: &[&str] = &[$(stringify!($field)),+];
                static META: [Metadata<'static>; 5] = [
                    metadata($name, Level::ERROR, FIELDS, Kind::EVENT, &$sites.0[0]),
                    metadata($name, Level::WARN, FIELDS, Kind::EVENT, &$sites.0[1]),
                    metadata($name, Level::INFO, FIELDS, Kind::EVENT, &$sites.0[2]),
                    metadata($name, Level::DEBUG, FIELDS, Kind::EVENT, &$sites.0[3]),
                    metadata($name, Level::TRACE, FIELDS, Kind::EVENT, &$sites.0[4]),
                ];
                Sites([
                    DefaultCallsite::new(&META[0]),
                    DefaultCallsite::new(&META[1]),
                    DefaultCallsite::new(&META[2]),
                    DefaultCallsite::new(&META[3]),
                    DefaultCallsite::new(&META[4]),
                ])
            };
        )+};
    }

    sites! {
        RETRYING = "retrying": message, function, attempt, delay_ms;
        RETRYING_ERROR = "retrying": message, function, attempt, delay_ms, error;
        RETRYING_OK = "retrying on an Ok value": message, function, attempt, delay_ms;
        RETRYING_VALUE = "retrying on an Ok value": message, function, attempt, delay_ms, value;
        HEDGING = "hedging": message, function, attempt, delay_ms;
        RECOVERED = "recovered": message, function, calls, elapsed_ms;
        GIVING_UP = "giving up": message, function, calls, reason;
        GIVING_UP_ERROR = "giving up": message, function, calls, reason, error;
        GIVING_UP_OK = "giving up on an Ok value": message, function, calls, reason;
        GIVING_UP_VALUE = "giving up on an Ok value": message, function, calls, reason, value;
        // Always at WARN: the other four levels' callsites are never used, so never registered.
        BREAKER = "circuit breaker": message, function, state;
    }

    #[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
    sites! {
        NOT_SENT_AGAIN = "not sent again": message, function, request, why;
    }

    /// The callsite of the span `retry_attempt` a face's resent attempt runs in (INFO, one
    /// field).
    ///
    /// As `tracing::info_span!` would write it, but its metadata names the crate, as the events'
    /// does.
    #[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
    static ATTEMPT: DefaultCallsite = {
        static META: Metadata<'static> = metadata(
            "retry_attempt",
            Level::INFO,
            &["http.request.resend_count"],
            Kind::SPAN,
            &ATTEMPT,
        );
        DefaultCallsite::new(&META)
    };

    /// Whether the current subscriber takes the event of `site` (at `level`).
    ///
    /// These are the checks of `tracing::event!`, in its order:
    ///
    /// - the levels every subscriber turns off;
    /// - the callsite's cached `Interest` (the first time, this registers the callsite);
    /// - only when that is "sometimes", the subscriber's `enabled`.
    #[inline]
    fn enabled(site: &'static DefaultCallsite, level: Level) -> bool {
        level <= STATIC_MAX_LEVEL && level <= LevelFilter::current() && {
            let interest = site.interest();
            !interest.is_never()
                && (interest.is_always()
                    || tracing::dispatcher::get_default(|d| d.enabled(site.metadata())))
        }
    }

    /// The value set of the event `$message` at `$site`, one of `$sites`.
    ///
    /// Its other fields' values are the `$value`s.
    ///
    /// One expression, its temporaries kept to the end of its statement, as `tracing::event!`
    /// writes it.
    macro_rules! values {
        ($sites:ident, $site:ident, $message:literal, $($value:expr),+) => {
            &$site.metadata().fields().value_set(&pairs(
                &$sites.fields($site),
                [&format_args!($message) as &dyn Value, $(&$value),+],
            ))
        };
    }

    /// The event `$message` of the callsites `$sites` at `$level`, its other fields' values the
    /// `$value`s.
    ///
    /// It does what `tracing::event!(target: TARGET, $level, $field…, $message)` does for a
    /// subscriber.
    ///
    /// The values are put together only when the event is taken.
    ///
    /// Not forwarded to `log`, as that macro does under `tracing`'s `log` feature: its way is
    /// not public.
    macro_rules! event {
        ($sites:ident at $level:expr, $message:literal, $($value:expr),+ $(,)?) => {{
            let level: Level = $level;
            let site = $sites.at(level);
            if enabled(site, level) {
                Event::dispatch(site.metadata(), values!($sites, site, $message, $($value),+));
            }
        }};
    }

    impl<R, F: Render<R>> Trace<R> for Tracer<F> {
        fn retry(&self, error: &R, ev: &RetryEvent) {
            let delay_ms = whole_ms(ev.delay);
            let (function, attempt) = (ev.function, ev.attempt);
            let level = self.level;
            match self.render.render(error) {
                Rendered::Display(e) => event!(
                    RETRYING_ERROR at level,
                    "retrying",
                    function,
                    attempt,
                    delay_ms,
                    tracing::field::display(e),
                ),
                Rendered::Debug(e) => event!(
                    RETRYING_ERROR at level,
                    "retrying",
                    function,
                    attempt,
                    delay_ms,
                    tracing::field::debug(e),
                ),
                Rendered::Value(v) => event!(
                    RETRYING_VALUE at level,
                    "retrying on an Ok value",
                    function,
                    attempt,
                    delay_ms,
                    tracing::field::debug(v),
                ),
                Rendered::Nothing if ev.ok => event!(
                    RETRYING_OK at level,
                    "retrying on an Ok value",
                    function,
                    attempt,
                    delay_ms,
                ),
                Rendered::Nothing => {
                    event!(RETRYING at level, "retrying", function, attempt, delay_ms)
                }
            }
        }

        fn hedge(&self, ev: &RetryEvent) {
            let delay_ms = whole_ms(ev.delay);
            let (function, attempt) = (ev.function, ev.attempt);
            event!(HEDGING at self.level, "hedging", function, attempt, delay_ms);
        }

        fn recovered(&self, function: &'static str, calls: u32, elapsed: core::time::Duration) {
            let elapsed_ms = whole_ms(elapsed);
            // One level below the retries': a recovery is the good news.
            let level = match self.level {
                Level::ERROR => Level::WARN,
                Level::WARN => Level::INFO,
                Level::INFO => Level::DEBUG,
                _ => Level::TRACE,
            };
            event!(RECOVERED at level, "recovered", function, calls, elapsed_ms);
        }

        fn give_up(&self, error: &R, g: &GiveUp) {
            let (function, calls, reason) = (g.function, g.calls, g.reason.as_str());
            let level = self.level;
            match self.render.render(error) {
                Rendered::Display(e) => event!(
                    GIVING_UP_ERROR at level,
                    "giving up",
                    function,
                    calls,
                    reason,
                    tracing::field::display(e),
                ),
                Rendered::Debug(e) => event!(
                    GIVING_UP_ERROR at level,
                    "giving up",
                    function,
                    calls,
                    reason,
                    tracing::field::debug(e),
                ),
                Rendered::Value(v) => event!(
                    GIVING_UP_VALUE at level,
                    "giving up on an Ok value",
                    function,
                    calls,
                    reason,
                    tracing::field::debug(v),
                ),
                Rendered::Nothing if g.ok => event!(
                    GIVING_UP_OK at level,
                    "giving up on an Ok value",
                    function,
                    calls,
                    reason,
                ),
                Rendered::Nothing => {
                    event!(GIVING_UP at level, "giving up", function, calls, reason)
                }
            }
        }
    }

    /// A call of `function` changed its breaker's state to `state`: an event at WARN.
    ///
    /// Fields `function` and `state` (`Debug`: `Open`, `HalfOpen`, `Closed`).
    #[cold]
    pub(crate) fn breaker_changed(function: &'static str, state: BreakerState) {
        event!(
            BREAKER at Level::WARN,
            "circuit breaker",
            function,
            tracing::field::debug(state),
        );
    }

    /// The write rule kept `request` of `function` from being sent again, because of `why`.
    ///
    /// `why`: "a write without an idempotency key", "a body it cannot replay".
    ///
    /// An event at `level`, fields `function`, `request` and `why`.
    ///
    /// `request` shows the method, the scheme, host and path alone (`middleware/describe.rs`).
    #[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
    #[cold]
    pub(crate) fn not_sent_again(
        level: Level,
        function: &'static str,
        request: &dyn Display,
        why: &'static str,
    ) {
        event!(
            NOT_SENT_AGAIN at level,
            "not sent again",
            function,
            tracing::field::display(request),
            why,
        );
    }

    /// The span a face's resent attempt runs in: `retry_attempt` at INFO.
    ///
    /// Its field: `http.request.resend_count` (1, 2, …).
    ///
    /// It does what `tracing::info_span!` does, in its order.
    ///
    /// The level's filters, the callsite's `Interest`, the subscriber's `enabled`.
    ///
    /// Then a new span in the current one, or `Span::none()` when no subscriber takes it.
    #[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
    pub(crate) fn attempt_span(resend_count: u32) -> Span {
        let site = &ATTEMPT;
        if !enabled(site, Level::INFO) {
            return Span::none();
        }
        let meta = site.metadata();
        let fields = meta.fields();
        let count = fields.iter().next().expect("one field");
        Span::new(
            meta,
            &fields.value_set(&[(&count, Some(&resend_count as &dyn Value))]),
        )
    }

    #[cfg(test)]
    mod tests {
        use std::sync::{Arc, Mutex};

        use tracing::field::{Field, Visit};
        use tracing::span::{Attributes, Id, Record};
        use tracing::subscriber::Interest;
        use tracing::{Event, Level, Metadata, Subscriber};

        /// What an event said: its metadata's origin and its fields, rendered.
        #[derive(Debug, Clone, PartialEq)]
        struct Said {
            name: &'static str,
            level: Level,
            target: &'static str,
            module_path: Option<&'static str>,
            file: Option<&'static str>,
            line: Option<u32>,
            fields: Vec<(String, String)>,
        }

        #[derive(Clone, Default)]
        struct Heard(Arc<Mutex<Vec<Said>>>);

        struct Fields<'a>(&'a mut Vec<(String, String)>);

        impl Visit for Fields<'_> {
            fn record_debug(&mut self, field: &Field, value: &dyn core::fmt::Debug) {
                self.0.push((field.name().to_owned(), format!("{value:?}")));
            }
            fn record_str(&mut self, field: &Field, value: &str) {
                self.0.push((field.name().to_owned(), value.to_owned()));
            }
        }

        impl Subscriber for Heard {
            fn register_callsite(&self, _: &'static Metadata<'static>) -> Interest {
                Interest::always()
            }
            fn enabled(&self, _: &Metadata<'_>) -> bool {
                true
            }
            fn new_span(&self, _: &Attributes<'_>) -> Id {
                Id::from_u64(1)
            }
            fn record(&self, _: &Id, _: &Record<'_>) {}
            fn record_follows_from(&self, _: &Id, _: &Id) {}
            fn event(&self, event: &Event<'_>) {
                let meta = event.metadata();
                let mut fields = Vec::new();
                event.record(&mut Fields(&mut fields));
                self.0.lock().unwrap().push(Said {
                    name: meta.name(),
                    level: *meta.level(),
                    target: meta.target(),
                    module_path: meta.module_path(),
                    file: meta.file(),
                    line: meta.line(),
                    fields,
                });
            }
            fn enter(&self, _: &Id) {}
            fn exit(&self, _: &Id) {}
        }

        const LEVELS: [Level; 5] = [
            Level::ERROR,
            Level::WARN,
            Level::INFO,
            Level::DEBUG,
            Level::TRACE,
        ];

        #[test]
        #[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
        fn not_sent_again_says_the_request_and_why_under_the_crate_s_name_at_every_level() {
            let heard = Heard::default();
            let request = String::from("POST http://127.0.0.1:8080/orders");
            tracing::subscriber::with_default(heard.clone(), || {
                for level in LEVELS {
                    super::not_sent_again(
                        level,
                        "orders",
                        &request,
                        "a write without an idempotency key",
                    );
                }
            });
            let heard = heard.0.lock().unwrap().clone();
            assert_eq!(heard.len(), 5, "{heard:#?}");
            for (said, level) in heard.iter().zip(LEVELS) {
                let fields = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
                    let own = |(n, v): &(&str, &str)| ((*n).to_owned(), (*v).to_owned());
                    pairs.iter().map(own).collect()
                };
                assert_eq!(
                    *said,
                    Said {
                        name: "not sent again",
                        level,
                        target: "retry_jitter",
                        module_path: Some("retry_jitter"),
                        file: None,
                        line: None,
                        fields: fields(&[
                            ("message", "not sent again"),
                            ("function", "orders"),
                            ("request", "POST http://127.0.0.1:8080/orders"),
                            ("why", "a write without an idempotency key"),
                        ]),
                    }
                );
            }
        }

        #[test]
        #[cfg(any(feature = "tower", feature = "reqwest-middleware"))]
        fn no_subscriber_no_span() {
            assert!(super::attempt_span(1).is_none());
        }
    }
}
