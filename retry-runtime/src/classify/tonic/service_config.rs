//! gRPC's service config, the JSON a service publishes for its clients.
//!
//! It comes by DNS, by xDS, or handed to the channel.
//!
//! It holds per-method timeouts, retry and hedging policies, and the channel's retry throttling.
//!
//! The policies are [gRFC A6](https://github.com/grpc/proposal/blob/master/A6-client-retries.md)'s.
//!
//! The JSON is read into a `serde_json::Value` and walked by hand.
//!
//! So every error names the JSON path of its value and the rule broken.
//!
//! The validation is A6's, as gRPC C-core applies it.
//!
//! The first error found is the one returned.
//!
//! Unknown fields are ignored.
//!
//! A `null` is an absent field (proto3 JSON).

use core::fmt;
use core::time::Duration;
use std::collections::HashMap;

use serde_json::{Map, Number, Value};
use tonic::Code;

/// gRPC's service config as a client applies it.
///
/// It holds the per-method configs (`methodConfig`) and the channel's retry throttling
/// (`retryThrottling`).
///
/// [`from_json`](Self::from_json) reads it from its JSON and checks gRPC's rules.
///
/// The rules are [gRFC A6](https://github.com/grpc/proposal/blob/master/A6-client-retries.md)'s.
///
/// Durations are proto3 JSON durations (`"0.1s"`).
///
/// Status codes are names in any case (`"UNAVAILABLE"`, `"unavailable"`) or numbers (`14`).
///
/// `maxAttempts` above 5 counts as 5, as in every gRPC client.
///
/// Fields this crate does not use (`loadBalancingConfig`, `maxRequestMessageBytes`, …) are ignored.
///
/// ```
/// use retry_jitter::tonic::ServiceConfig;
///
/// let config = ServiceConfig::from_json(r#"{
///   "methodConfig": [{
///     "name": [{ "service": "helloworld.Greeter" }],
///     "timeout": "2.5s",
///     "retryPolicy": {
///       "maxAttempts": 4,
///       "initialBackoff": "0.1s",
///       "maxBackoff": "1s",
///       "backoffMultiplier": 2,
///       "retryableStatusCodes": ["UNAVAILABLE"]
///     }
///   }],
///   "retryThrottling": { "maxTokens": 10, "tokenRatio": 0.1 }
/// }"#);
/// assert!(config.is_ok());
///
/// let bad = ServiceConfig::from_json(r#"{"methodConfig": [{"retryPolicy": {"maxAttempts": 1}}]}"#);
/// assert_eq!(
///     bad.unwrap_err().to_string(),
///     "methodConfig[0].retryPolicy.maxAttempts: must be an integer greater than 1",
/// );
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ServiceConfig {
    /// The `methodConfig` entries, in the JSON's order.
    methods: Vec<MethodConfig>,
    /// Each name to its entry in `methods`, as in gRPC's own map.
    ///
    /// `/service/method` names a method, `/service/` a whole service.
    names: HashMap<String, usize>,
    /// The entry of the empty name (`{}` or `{"service": ""}`).
    ///
    /// It is every method's default.
    default: Option<usize>,
    throttling: Option<Throttling>,
}

/// Why a service config was refused.
///
/// It gives the JSON path of the value at fault and the rule it broke.
///
/// Its `Display` shows them: `methodConfig[0].retryPolicy.maxAttempts: must be an integer greater
/// than 1`.
///
/// JSON that does not parse is refused too.
///
/// The error then gives serde_json's account of where.
///
/// ```
/// use retry_jitter::tonic::ServiceConfig;
///
/// let err = ServiceConfig::from_json(r#"{
///   "methodConfig": [{
///     "name": [{ "service": "pkg.Service" }],
///     "hedgingPolicy": { "maxAttempts": 3, "nonFatalStatusCodes": ["UNAVAILABLE", "SOON"] }
///   }]
/// }"#)
/// .unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     r#"methodConfig[0].hedgingPolicy.nonFatalStatusCodes[1]: unknown status code "SOON""#,
/// );
///
/// let err = ServiceConfig::from_json("{ not json").unwrap_err();
/// assert!(err.to_string().starts_with("invalid JSON: "));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceConfigError {
    /// Where, as a JSON path (`methodConfig[0].name[1]`).
    ///
    /// It is empty for the document itself.
    path: String,
    /// The rule broken, or the JSON parser's message.
    message: String,
}

impl ServiceConfigError {
    fn new(path: &str, message: impl Into<String>) -> Self {
        ServiceConfigError {
            path: path.to_owned(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ServiceConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for ServiceConfigError {}

// The parsed policies, not public.
//
// The layer that applies them (`ServiceConfigLayer`) reads them.

/// One `methodConfig` entry: what applies to the methods it names.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MethodConfig {
    /// `timeout`: the call's deadline, all attempts included.
    pub(crate) timeout: Option<Duration>,
    /// `waitForReady`: wait for a connection rather than fail fast.
    ///
    /// It applies while there is no connection.
    pub(crate) wait_for_ready: Option<bool>,
    /// `retryPolicy` or `hedgingPolicy`, never both; `None`: no retries, no hedges.
    pub(crate) policy: Option<Policy>,
}

/// The one policy a method may have.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Policy {
    /// `retryPolicy`: one attempt at a time.
    ///
    /// It retries after a failure with a retryable code.
    Retry(RetryPolicy),
    /// `hedgingPolicy`: further attempts every `hedgingDelay` while none has answered.
    Hedging(HedgingPolicy),
}

/// A6's `retryPolicy`, checked.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct RetryPolicy {
    /// Attempts in all, the first included: 2 to 5.
    ///
    /// A larger value is read as 5.
    pub(crate) max_attempts: u32,
    /// The first retry's backoff, above zero.
    ///
    /// A6 draws the wait in `[0.8, 1.2]` times it.
    pub(crate) initial_backoff: Duration,
    /// The backoff's ceiling; above zero.
    pub(crate) max_backoff: Duration,
    /// Each retry's backoff is the previous one's times this.
    ///
    /// It is above zero and finite.
    pub(crate) backoff_multiplier: f64,
    /// The codes a failed attempt is retried on.
    ///
    /// The set is empty only with `per_attempt_recv_timeout`.
    pub(crate) retryable_status_codes: CodeSet,
    /// `perAttemptRecvTimeout` (gRPC C-core): each attempt's own timeout; above zero.
    pub(crate) per_attempt_recv_timeout: Option<Duration>,
}

/// A6's `hedgingPolicy`, checked.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HedgingPolicy {
    /// Attempts in all, the first included: 2 to 5.
    ///
    /// A larger value is read as 5.
    pub(crate) max_attempts: u32,
    /// The wait before each further attempt.
    ///
    /// Zero, the default, sends them all at once.
    pub(crate) hedging_delay: Duration,
    /// The codes after which the other attempts go on.
    ///
    /// Any other code ends the call.
    pub(crate) non_fatal_status_codes: CodeSet,
}

/// A6's `retryThrottling`, in thousandths of a token.
///
/// gRPC C-core keeps it so, dropping digits past the third decimal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Throttling {
    /// `maxTokens` × 1000: 1 to 1 000 000.
    pub(crate) max_milli_tokens: u32,
    /// `tokenRatio` × 1000: at least 1 (saturating at `u32::MAX`).
    pub(crate) milli_token_ratio: u32,
}

impl Throttling {
    /// A full bucket of this size and ratio, for one target's calls.
    pub(crate) fn budget(self) -> crate::fleet::RetryThrottling {
        crate::fleet::RetryThrottling::from_milli(self.max_milli_tokens, self.milli_token_ratio)
    }
}

/// A set of gRPC status codes, one bit per code.
///
/// Codes run from 0 to 16.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct CodeSet(u32);

impl CodeSet {
    /// Whether `code` is in the set.
    pub(crate) fn contains(self, code: Code) -> bool {
        let n = i32::from(code);
        (0..CODE_NAMES.len() as i32).contains(&n) && self.0 & (1 << n) != 0
    }

    /// Whether no code is in the set.
    pub(crate) fn is_empty(self) -> bool {
        self.0 == 0
    }

    fn insert(&mut self, n: usize) {
        self.0 |= 1 << n;
    }

    /// The set of `codes`.
    #[cfg(test)]
    pub(crate) fn of(codes: &[Code]) -> Self {
        let mut set = CodeSet::default();
        for &code in codes {
            set.insert(usize::try_from(i32::from(code)).unwrap_or(0));
        }
        set
    }
}

impl ServiceConfig {
    /// Reads a service config from its JSON text.
    ///
    /// It checks every rule gRPC checks.
    ///
    /// The first value found at fault is the error, named by its JSON path.
    ///
    /// An empty object (`{}`) is valid and configures nothing.
    ///
    /// ```
    /// use retry_jitter::tonic::ServiceConfig;
    ///
    /// assert!(ServiceConfig::from_json("{}").is_ok());
    /// let err = ServiceConfig::from_json(r#"{"retryThrottling": {"maxTokens": 0, "tokenRatio": 1}}"#);
    /// assert_eq!(
    ///     err.unwrap_err().to_string(),
    ///     "retryThrottling.maxTokens: must be a number greater than 0 and at most 1000",
    /// );
    /// ```
    pub fn from_json(json: &str) -> Result<ServiceConfig, ServiceConfigError> {
        let value: Value = serde_json::from_str(json)
            .map_err(|e| ServiceConfigError::new("", format!("invalid JSON: {e}")))?;
        let root = value.as_object().ok_or_else(|| {
            ServiceConfigError::new("", "the service config must be a JSON object")
        })?;
        let mut config = ServiceConfig {
            methods: Vec::new(),
            names: HashMap::new(),
            default: None,
            throttling: None,
        };
        if let Some(entries) = field(root, "methodConfig") {
            let entries = entries
                .as_array()
                .ok_or_else(|| ServiceConfigError::new("methodConfig", "must be an array"))?;
            for (i, entry) in entries.iter().enumerate() {
                config.method_config(&format!("methodConfig[{i}]"), entry)?;
            }
        }
        if let Some(throttling) = field(root, "retryThrottling") {
            config.throttling = Some(retry_throttling("retryThrottling", throttling)?);
        }
        Ok(config)
    }

    /// The config for a call of `path`, a gRPC path (`/pkg.Service/Method`).
    ///
    /// It is the entry naming that method, else its service's.
    ///
    /// Else it is the default (the empty name), as gRPC looks it up.
    #[cfg(test)]
    pub(crate) fn method(&self, path: &str) -> Option<&MethodConfig> {
        self.method_index(path).map(|i| &self.methods[i])
    }

    /// Which entry of [`methods`](Self::methods) applies to a call of `path`.
    ///
    /// `path` is `/service/method`.
    ///
    /// It is the one naming that method, else the one naming its service.
    ///
    /// Else it is the default (the empty name), as gRPC looks it up.
    pub(crate) fn method_index(&self, path: &str) -> Option<usize> {
        let index = self.names.get(path).or_else(|| {
            let slash = path.rfind('/')?;
            self.names.get(&path[..=slash])
        });
        index.or(self.default.as_ref()).copied()
    }

    /// The `methodConfig` entries, in the JSON's order.
    pub(crate) fn methods(&self) -> &[MethodConfig] {
        &self.methods
    }

    /// `retryThrottling`, if the config has it.
    pub(crate) fn retry_throttling(&self) -> Option<Throttling> {
        self.throttling
    }

    /// Reads one `methodConfig` entry at `at` and records its names.
    fn method_config(&mut self, at: &str, entry: &Value) -> Result<(), ServiceConfigError> {
        let entry = object(at, entry)?;
        let index = self.methods.len();
        if let Some(names) = field(entry, "name") {
            let at = join(at, "name");
            let names = names
                .as_array()
                .ok_or_else(|| ServiceConfigError::new(&at, "must be an array"))?;
            for (j, name) in names.iter().enumerate() {
                self.name(&format!("{at}[{j}]"), name, index)?;
            }
        }
        let timeout = match field(entry, "timeout") {
            Some(v) => Some(duration(&join(at, "timeout"), v)?),
            None => None,
        };
        let wait_for_ready = match field(entry, "waitForReady") {
            Some(v) => Some(v.as_bool().ok_or_else(|| {
                ServiceConfigError::new(&join(at, "waitForReady"), "must be a boolean")
            })?),
            None => None,
        };
        let policy =
            match (field(entry, "retryPolicy"), field(entry, "hedgingPolicy")) {
                (Some(_), Some(_)) => return Err(ServiceConfigError::new(
                    at,
                    "retryPolicy and hedgingPolicy are exclusive: a method has one or the other",
                )),
                (Some(retry), None) => Some(Policy::Retry(retry_policy(
                    &join(at, "retryPolicy"),
                    retry,
                )?)),
                (None, Some(hedging)) => Some(Policy::Hedging(hedging_policy(
                    &join(at, "hedgingPolicy"),
                    hedging,
                )?)),
                (None, None) => None,
            };
        self.methods.push(MethodConfig {
            timeout,
            wait_for_ready,
            policy,
        });
        Ok(())
    }

    /// Reads one name at `at`, for the entry `index`.
    ///
    /// A name given twice is an error.
    fn name(&mut self, at: &str, name: &Value, index: usize) -> Result<(), ServiceConfigError> {
        let name = object(at, name)?;
        let text = |key: &str| -> Result<Option<&str>, ServiceConfigError> {
            match field(name, key) {
                None => Ok(None),
                Some(v) => v
                    .as_str()
                    .map(Some)
                    .ok_or_else(|| ServiceConfigError::new(&join(at, key), "must be a string")),
            }
        };
        let service = text("service")?.unwrap_or("");
        let method = text("method")?.unwrap_or("");
        if service.is_empty() {
            if !method.is_empty() {
                return Err(ServiceConfigError::new(
                    &join(at, "method"),
                    "a method needs its service: \"service\" is missing or empty",
                ));
            }
            if self.default.is_some() {
                return Err(ServiceConfigError::new(
                    at,
                    "duplicate name: the default (empty service) is named twice",
                ));
            }
            self.default = Some(index);
            return Ok(());
        }
        let key = format!("/{service}/{method}");
        if self.names.contains_key(&key) {
            return Err(ServiceConfigError::new(
                at,
                format!("duplicate name: {key} is named twice"),
            ));
        }
        self.names.insert(key, index);
        Ok(())
    }
}

/// Reads `retryPolicy` at `at`.
fn retry_policy(at: &str, value: &Value) -> Result<RetryPolicy, ServiceConfigError> {
    let policy = object(at, value)?;
    let max_attempts = max_attempts(at, policy)?;
    let positive = |key: &str| -> Result<Duration, ServiceConfigError> {
        let at = join(at, key);
        let d = duration(&at, required(&at, policy, key)?)?;
        if d.is_zero() {
            return Err(ServiceConfigError::new(&at, "must be greater than 0"));
        }
        Ok(d)
    };
    let initial_backoff = positive("initialBackoff")?;
    let max_backoff = positive("maxBackoff")?;
    let backoff_multiplier = {
        let at = join(at, "backoffMultiplier");
        let value = required(&at, policy, "backoffMultiplier")?;
        match value.as_f64() {
            Some(m) if m > 0.0 && m.is_finite() => m,
            _ => {
                return Err(ServiceConfigError::new(
                    &at,
                    "must be a number greater than 0",
                ))
            }
        }
    };
    let per_attempt_recv_timeout = match field(policy, "perAttemptRecvTimeout") {
        Some(_) => Some(positive("perAttemptRecvTimeout")?),
        None => None,
    };
    let codes_at = join(at, "retryableStatusCodes");
    let retryable_status_codes = match field(policy, "retryableStatusCodes") {
        Some(codes) => code_set(&codes_at, codes)?,
        None => CodeSet::default(),
    };
    if retryable_status_codes.is_empty() && per_attempt_recv_timeout.is_none() {
        let message = if field(policy, "retryableStatusCodes").is_some() {
            "must be non-empty (unless perAttemptRecvTimeout is set)"
        } else {
            "is required (unless perAttemptRecvTimeout is set)"
        };
        return Err(with_hint(
            &codes_at,
            policy,
            "retryableStatusCodes",
            message,
        ));
    }
    Ok(RetryPolicy {
        max_attempts,
        initial_backoff,
        max_backoff,
        backoff_multiplier,
        retryable_status_codes,
        per_attempt_recv_timeout,
    })
}

/// Reads `hedgingPolicy` at `at`.
fn hedging_policy(at: &str, value: &Value) -> Result<HedgingPolicy, ServiceConfigError> {
    let policy = object(at, value)?;
    let max_attempts = max_attempts(at, policy)?;
    let hedging_delay = match field(policy, "hedgingDelay") {
        Some(v) => duration(&join(at, "hedgingDelay"), v)?,
        None => Duration::ZERO,
    };
    let non_fatal_status_codes = match field(policy, "nonFatalStatusCodes") {
        Some(codes) => code_set(&join(at, "nonFatalStatusCodes"), codes)?,
        None => CodeSet::default(),
    };
    Ok(HedgingPolicy {
        max_attempts,
        hedging_delay,
        non_fatal_status_codes,
    })
}

/// The most attempts a policy gets, whatever the config says.
///
/// A6: "values greater than 5 are treated as 5".
const MAX_ATTEMPTS_CAP: u32 = 5;

/// A policy's `maxAttempts`: a JSON integer above 1, capped at 5.
fn max_attempts(at: &str, policy: &Map<String, Value>) -> Result<u32, ServiceConfigError> {
    let at = join(at, "maxAttempts");
    let value = required(&at, policy, "maxAttempts")?;
    match value.as_u64() {
        Some(n) if n > 1 => Ok(n.min(u64::from(MAX_ATTEMPTS_CAP)) as u32),
        _ => Err(ServiceConfigError::new(
            &at,
            "must be an integer greater than 1",
        )),
    }
}

/// Reads `retryThrottling` at `at`.
fn retry_throttling(at: &str, value: &Value) -> Result<Throttling, ServiceConfigError> {
    let throttling = object(at, value)?;
    let max_milli_tokens = {
        let at = join(at, "maxTokens");
        let rule = "must be a number greater than 0 and at most 1000";
        let n = number(&at, required(&at, throttling, "maxTokens")?, rule)?;
        match thousandths(n) {
            Some(milli) if milli > 0 && milli <= 1_000_000 => milli as u32,
            _ => return Err(ServiceConfigError::new(&at, rule)),
        }
    };
    let milli_token_ratio = {
        let at = join(at, "tokenRatio");
        let rule = "must be a number greater than 0";
        let n = number(&at, required(&at, throttling, "tokenRatio")?, rule)?;
        if n.as_f64().is_none_or(|x| x <= 0.0) {
            return Err(ServiceConfigError::new(&at, rule));
        }
        match thousandths(n) {
            Some(0) => {
                return Err(ServiceConfigError::new(
                    &at,
                    "must be at least 0.001 (digits past the third decimal are dropped)",
                ))
            }
            Some(milli) => u32::try_from(milli).unwrap_or(u32::MAX),
            None => return Err(ServiceConfigError::new(&at, rule)),
        }
    };
    Ok(Throttling {
        max_milli_tokens,
        milli_token_ratio,
    })
}

/// A JSON number at `at`, or the `rule` it breaks.
fn number<'a>(at: &str, value: &'a Value, rule: &str) -> Result<&'a Number, ServiceConfigError> {
    match value {
        Value::Number(n) => Ok(n),
        _ => Err(ServiceConfigError::new(at, rule)),
    }
}

/// A non-negative JSON number in thousandths.
///
/// The digits past the third decimal are dropped.
///
/// That is gRPC C-core's arithmetic: it reads the decimal text.
///
/// It does not read a float times 1000.
///
/// `None` for a negative number.
///
/// A float is read back from its shortest decimal form.
///
/// That is Rust's `Display`, never an exponent.
///
/// For any number of up to 15 significant digits, that is the text it was written as.
///
/// Saturates at `u64::MAX`.
fn thousandths(n: &Number) -> Option<u64> {
    if let Some(whole) = n.as_u64() {
        return Some(whole.saturating_mul(1000));
    }
    let x = n.as_f64()?;
    if x.is_sign_negative() || !x.is_finite() {
        // -0.0 included: zero all the same.
        return if x == 0.0 { Some(0) } else { None };
    }
    let text = x.to_string();
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
    let whole = whole
        .bytes()
        .try_fold(0u64, |n, b| {
            n.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        })
        .unwrap_or(u64::MAX);
    let milli = fraction
        .bytes()
        .chain(core::iter::repeat(b'0'))
        .take(3)
        .fold(0u64, |n, b| n * 10 + u64::from(b - b'0'));
    Some(whole.saturating_mul(1000).saturating_add(milli))
}

/// The status codes' names, by number.
///
/// They are gRPC's `grpc_status_code` spellings.
const CODE_NAMES: [&str; 17] = [
    "OK",
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
];

/// A JSON array of status codes at `at`.
///
/// Each is a name in any case, or a number from 0 to 16.
fn code_set(at: &str, value: &Value) -> Result<CodeSet, ServiceConfigError> {
    let codes = value
        .as_array()
        .ok_or_else(|| ServiceConfigError::new(at, "must be an array of status codes"))?;
    let mut set = CodeSet::default();
    for (i, code) in codes.iter().enumerate() {
        let at = format!("{at}[{i}]");
        let n = match code {
            Value::String(name) => CODE_NAMES
                .iter()
                .position(|known| known.eq_ignore_ascii_case(name))
                .ok_or_else(|| {
                    ServiceConfigError::new(&at, format!("unknown status code {code}"))
                })?,
            Value::Number(n) => n
                .as_u64()
                .filter(|&n| n < CODE_NAMES.len() as u64)
                .ok_or_else(|| {
                    ServiceConfigError::new(
                        &at,
                        format!("unknown status code {n}: codes are 0 to 16"),
                    )
                })? as usize,
            _ => {
                return Err(ServiceConfigError::new(
                    &at,
                    "must be a status code, a name (\"UNAVAILABLE\") or a number (14)",
                ))
            }
        };
        set.insert(n);
    }
    Ok(set)
}

/// The largest duration proto3 allows: 10 000 years, in seconds.
const MAX_DURATION_SECS: u64 = 315_576_000_000;

/// A proto3 JSON duration at `at`.
///
/// It is a string of decimal seconds and an `s`.
///
/// Examples: `"1s"`, `"0.1s"`, `".5s"`, `"1.000000001s"`.
///
/// It has at most nine fractional digits.
///
/// It has no sign: no field here takes a negative duration.
///
/// It takes no exponent and no other unit.
///
/// It is at most 315 576 000 000 s.
fn duration(at: &str, value: &Value) -> Result<Duration, ServiceConfigError> {
    let malformed = || {
        ServiceConfigError::new(
            at,
            "must be a duration: decimal seconds ending in \"s\", such as \"0.1s\"",
        )
    };
    let text = value.as_str().ok_or_else(malformed)?;
    let number = text.strip_suffix('s').ok_or_else(malformed)?;
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !digits(fraction) || whole.len() + fraction.len() == 0 {
        return Err(malformed());
    }
    if fraction.len() > 9 {
        return Err(ServiceConfigError::new(
            at,
            "must have at most 9 digits after the decimal point",
        ));
    }
    let secs = whole
        .bytes()
        .try_fold(0u64, |n, b| {
            n.checked_mul(10)?.checked_add(u64::from(b - b'0'))
        })
        .filter(|&s| s <= MAX_DURATION_SECS);
    let Some(secs) = secs else {
        return Err(ServiceConfigError::new(
            at,
            format!("must be at most {MAX_DURATION_SECS}s"),
        ));
    };
    let nanos = fraction
        .bytes()
        .chain(core::iter::repeat(b'0'))
        .take(9)
        .fold(0u32, |n, b| n * 10 + u32::from(b - b'0'));
    Ok(Duration::new(secs, nanos))
}

/// `value` as an object, or the error at `at`.
fn object<'a>(at: &str, value: &'a Value) -> Result<&'a Map<String, Value>, ServiceConfigError> {
    value
        .as_object()
        .ok_or_else(|| ServiceConfigError::new(at, "must be an object"))
}

/// The field `key`, absent if `null`.
///
/// That is how proto3 JSON reads a `null`.
fn field<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    object.get(key).filter(|v| !v.is_null())
}

/// The field `key`, which must be there.
///
/// `at` is its path.
fn required<'a>(
    at: &str,
    object: &'a Map<String, Value>,
    key: &str,
) -> Result<&'a Value, ServiceConfigError> {
    field(object, key).ok_or_else(|| with_hint(at, object, key, "is required"))
}

/// The error `message` for the missing field `key`.
///
/// It has a hint when the object has that field in another case.
///
/// grpc-go reads field names in any case, as Go's JSON does.
///
/// So configs written for grpc-go may say `"MaxAttempts"`.
///
/// gRPC's other clients, and this parser, do not.
fn with_hint(
    at: &str,
    object: &Map<String, Value>,
    key: &str,
    message: &str,
) -> ServiceConfigError {
    match object.keys().find(|k| k.eq_ignore_ascii_case(key)) {
        Some(other) if other != key => ServiceConfigError::new(
            at,
            format!("{message} (found \"{other}\": field names are case-sensitive)"),
        ),
        _ => ServiceConfigError::new(at, message),
    }
}

/// The path of `key` inside `at`.
fn join(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_owned()
    } else {
        format!("{at}.{key}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> ServiceConfig {
        ServiceConfig::from_json(json).unwrap_or_else(|e| panic!("{e}\n{json}"))
    }

    /// The error's text for `json`.
    fn error(json: &str) -> String {
        match ServiceConfig::from_json(json) {
            Ok(config) => panic!("accepted: {json}\n{config:?}"),
            Err(e) => e.to_string(),
        }
    }

    /// A config whose one method entry (named `pkg.S`) has `body` added.
    fn method(body: &str) -> String {
        format!(r#"{{"methodConfig": [{{"name": [{{"service": "pkg.S"}}]{body}}}]}}"#)
    }

    /// A retry policy: the valid one with `fields` replacing or adding fields.
    fn retry(fields: &str) -> String {
        let mut policy: Map<String, Value> = serde_json::from_str(
            r#"{"maxAttempts": 3, "initialBackoff": "0.1s", "maxBackoff": "1s",
                "backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}"#,
        )
        .unwrap();
        let extra: Map<String, Value> = serde_json::from_str(&format!("{{{fields}}}")).unwrap();
        for (k, v) in extra {
            if v == Value::String("<remove>".into()) {
                policy.remove(&k);
            } else {
                policy.insert(k, v);
            }
        }
        method(&format!(r#", "retryPolicy": {}"#, Value::Object(policy)))
    }

    fn retry_policy_of(config: &ServiceConfig) -> &RetryPolicy {
        match &config.method("/pkg.S/M").unwrap().policy {
            Some(Policy::Retry(p)) => p,
            other => panic!("{other:?}"),
        }
    }

    fn hedging_policy_of(config: &ServiceConfig) -> &HedgingPolicy {
        match &config.method("/pkg.S/M").unwrap().policy {
            Some(Policy::Hedging(p)) => p,
            other => panic!("{other:?}"),
        }
    }

    fn codes(list: &[Code]) -> CodeSet {
        let mut set = CodeSet::default();
        for &c in list {
            set.insert(i32::from(c) as usize);
        }
        set
    }

    #[test]
    fn empty_config_configures_nothing() {
        let config = parse("{}");
        assert_eq!(config.method("/pkg.S/M"), None);
        assert_eq!(config.retry_throttling(), None);
        let config = parse(r#"{"methodConfig": [], "retryThrottling": null}"#);
        assert_eq!(config.method("/pkg.S/M"), None);
    }

    #[test]
    fn invalid_json_and_non_objects() {
        assert!(error("").starts_with("invalid JSON: "));
        assert!(error("{\"methodConfig\": [").starts_with("invalid JSON: "));
        assert!(error("{} x").starts_with("invalid JSON: "));
        assert_eq!(error("[]"), "the service config must be a JSON object");
        assert_eq!(error("null"), "the service config must be a JSON object");
        assert_eq!(
            error(r#"{"methodConfig": {}}"#),
            "methodConfig: must be an array"
        );
        assert_eq!(
            error(r#"{"methodConfig": [1]}"#),
            "methodConfig[0]: must be an object"
        );
        assert_eq!(
            error(r#"{"methodConfig": [{"name": {}}]}"#),
            "methodConfig[0].name: must be an array"
        );
        assert_eq!(
            error(r#"{"methodConfig": [{"name": ["pkg.S"]}]}"#),
            "methodConfig[0].name[0]: must be an object"
        );
        assert_eq!(
            error(r#"{"methodConfig": [{"name": [{"service": 1}]}]}"#),
            "methodConfig[0].name[0].service: must be a string"
        );
    }

    #[test]
    fn the_most_specific_name_wins() {
        let config = parse(
            r#"{"methodConfig": [
                {"name": [{"service": "pkg.S", "method": "Get"}, {"service": "pkg.T", "method": "Put"}], "timeout": "1s"},
                {"name": [{"service": "pkg.S"}], "timeout": "2s"},
                {"name": [{}], "timeout": "3s"},
                {"name": [{"service": "pkg.U", "method": ""}], "timeout": "4s"}
            ]}"#,
        );
        let timeout = |path| config.method(path).and_then(|m| m.timeout);
        assert_eq!(timeout("/pkg.S/Get"), Some(Duration::from_secs(1)));
        assert_eq!(timeout("/pkg.T/Put"), Some(Duration::from_secs(1)));
        assert_eq!(timeout("/pkg.S/Put"), Some(Duration::from_secs(2)));
        assert_eq!(timeout("/pkg.T/Get"), Some(Duration::from_secs(3)));
        assert_eq!(timeout("/pkg.U/Any"), Some(Duration::from_secs(4)));
        assert_eq!(timeout("/other.V/Get"), Some(Duration::from_secs(3)));
        assert_eq!(timeout("not a path"), Some(Duration::from_secs(3)));
        assert_eq!(timeout(""), Some(Duration::from_secs(3)));

        // `{"service": ""}` is the default too.
        //
        // Without a default, other paths have none.
        let config =
            parse(r#"{"methodConfig": [{"name": [{"service": ""}], "waitForReady": true}]}"#);
        assert_eq!(config.method("/a.B/C").unwrap().wait_for_ready, Some(true));
        let config =
            parse(r#"{"methodConfig": [{"name": [{"service": "pkg.S"}]}, {"timeout": "1s"}]}"#);
        assert!(config.method("/pkg.S/M").is_some());
        assert_eq!(config.method("/pkg.T/M"), None);
        assert_eq!(config.method("/pkg.S"), None);
    }

    #[test]
    fn names_are_checked() {
        assert_eq!(
            error(r#"{"methodConfig": [{"name": [{"method": "Get"}]}]}"#),
            r#"methodConfig[0].name[0].method: a method needs its service: "service" is missing or empty"#
        );
        assert_eq!(
            error(r#"{"methodConfig": [{"name": [{"service": "", "method": "Get"}]}]}"#),
            r#"methodConfig[0].name[0].method: a method needs its service: "service" is missing or empty"#
        );
        assert_eq!(
            error(
                r#"{"methodConfig": [{"name": [{"service": "pkg.S", "method": "Get"}]},
                                     {"name": [{"service": "pkg.T"}, {"service": "pkg.S", "method": "Get"}]}]}"#
            ),
            "methodConfig[1].name[1]: duplicate name: /pkg.S/Get is named twice"
        );
        assert_eq!(
            error(
                r#"{"methodConfig": [{"name": [{"service": "pkg.S"}, {"service": "pkg.S", "method": ""}]}]}"#
            ),
            "methodConfig[0].name[1]: duplicate name: /pkg.S/ is named twice"
        );
        assert_eq!(
            error(r#"{"methodConfig": [{"name": [{}]}, {"name": [{"service": ""}]}]}"#),
            "methodConfig[1].name[0]: duplicate name: the default (empty service) is named twice"
        );
        // A method and its service are two names.
        //
        // Two entries without names are no clash.
        parse(
            r#"{"methodConfig": [{"name": [{"service": "pkg.S"}, {"service": "pkg.S", "method": "M"}]}, {}, {"name": []}]}"#,
        );
    }

    #[test]
    fn timeout_and_wait_for_ready() {
        let config = parse(&method(r#", "timeout": "0.25s", "waitForReady": false"#));
        let m = config.method("/pkg.S/M").unwrap();
        assert_eq!(m.timeout, Some(Duration::from_millis(250)));
        assert_eq!(m.wait_for_ready, Some(false));
        assert_eq!(m.policy, None);
        assert_eq!(
            error(&method(r#", "timeout": 1"#)),
            r#"methodConfig[0].timeout: must be a duration: decimal seconds ending in "s", such as "0.1s""#
        );
        assert_eq!(
            error(&method(r#", "waitForReady": "true""#)),
            "methodConfig[0].waitForReady: must be a boolean"
        );
    }

    #[test]
    fn durations() {
        let d = |text: &str| duration("d", &Value::String(text.into()));
        assert_eq!(d("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(d("0s"), Ok(Duration::ZERO));
        assert_eq!(d("0.1s"), Ok(Duration::from_millis(100)));
        assert_eq!(d(".01s"), Ok(Duration::from_millis(10)));
        assert_eq!(d("2.s"), Ok(Duration::from_secs(2)));
        assert_eq!(d("1.000000001s"), Ok(Duration::new(1, 1)));
        assert_eq!(d("0.999999999s"), Ok(Duration::new(0, 999_999_999)));
        assert_eq!(d("86400.5s"), Ok(Duration::new(86_400, 500_000_000)));
        assert_eq!(d("315576000000s"), Ok(Duration::from_secs(315_576_000_000)));
        assert_eq!(
            d("315576000000.999999999s"),
            Ok(Duration::new(315_576_000_000, 999_999_999))
        );
        let malformed = r#"d: must be a duration: decimal seconds ending in "s", such as "0.1s""#;
        for bad in [
            "", "s", ".s", "1", "1ms", "1m", "-1s", "+1s", "1e3s", "1.5e1s", " 1s", "1s ", "1 s",
            "1.2.3s", "0x1s", "1S", "١s", "1,5s", "NaNs", "infs",
        ] {
            assert_eq!(d(bad).unwrap_err().to_string(), malformed, "{bad:?}");
        }
        assert_eq!(
            d("1.0000000001s").unwrap_err().to_string(),
            "d: must have at most 9 digits after the decimal point"
        );
        for big in ["315576000001s", "99999999999999999999999s"] {
            assert_eq!(
                d(big).unwrap_err().to_string(),
                "d: must be at most 315576000000s",
                "{big}"
            );
        }
        assert!(duration("d", &Value::from(1.5)).is_err());
        assert!(duration("d", &Value::Null).is_err());
    }

    #[test]
    fn a_retry_policy() {
        let config = parse(&retry(r#""perAttemptRecvTimeout": "0.5s""#));
        assert_eq!(
            retry_policy_of(&config),
            &RetryPolicy {
                max_attempts: 3,
                initial_backoff: Duration::from_millis(100),
                max_backoff: Duration::from_secs(1),
                backoff_multiplier: 2.0,
                retryable_status_codes: codes(&[Code::Unavailable]),
                per_attempt_recv_timeout: Some(Duration::from_millis(500)),
            }
        );
        let config = parse(&retry(r#""backoffMultiplier": 0.5"#));
        assert_eq!(retry_policy_of(&config).backoff_multiplier, 0.5);
        assert_eq!(retry_policy_of(&config).per_attempt_recv_timeout, None);
    }

    #[test]
    fn max_attempts_above_five_is_five() {
        for (given, read) in [
            ("2", 2),
            ("5", 5),
            ("6", 5),
            ("100", 5),
            ("18446744073709551615", 5),
        ] {
            let config = parse(&retry(&format!(r#""maxAttempts": {given}"#)));
            assert_eq!(retry_policy_of(&config).max_attempts, read, "{given}");
            let hedged = method(&format!(r#", "hedgingPolicy": {{"maxAttempts": {given}}}"#));
            assert_eq!(
                hedging_policy_of(&parse(&hedged)).max_attempts,
                read,
                "{given}"
            );
        }
    }

    #[test]
    fn retry_policy_rules() {
        let at = "methodConfig[0].retryPolicy";
        for bad in [
            "1",
            "0",
            "-3",
            "2.0",
            "2.5",
            "1e1",
            "\"3\"",
            "true",
            "[]",
            "1e30",
            "18446744073709551616",
        ] {
            assert_eq!(
                error(&retry(&format!(r#""maxAttempts": {bad}"#))),
                format!("{at}.maxAttempts: must be an integer greater than 1"),
                "{bad}"
            );
        }
        assert_eq!(
            error(&retry(r#""maxAttempts": "<remove>""#)),
            format!("{at}.maxAttempts: is required")
        );
        assert_eq!(
            error(&retry(r#""maxAttempts": null"#)),
            format!("{at}.maxAttempts: is required")
        );
        for key in ["initialBackoff", "maxBackoff"] {
            assert_eq!(
                error(&retry(&format!(r#""{key}": "0s""#))),
                format!("{at}.{key}: must be greater than 0")
            );
            assert_eq!(
                error(&retry(&format!(r#""{key}": "0.000000000s""#))),
                format!("{at}.{key}: must be greater than 0")
            );
            assert_eq!(
                error(&retry(&format!(r#""{key}": "<remove>""#))),
                format!("{at}.{key}: is required")
            );
            assert_eq!(
                error(&retry(&format!(r#""{key}": "-1s""#))),
                format!(
                    r#"{at}.{key}: must be a duration: decimal seconds ending in "s", such as "0.1s""#
                )
            );
            parse(&retry(&format!(r#""{key}": "0.000000001s""#)));
        }
        for bad in ["0", "-1", "0.0", "\"2\"", "null"] {
            let expected = if bad == "null" {
                format!("{at}.backoffMultiplier: is required")
            } else {
                format!("{at}.backoffMultiplier: must be a number greater than 0")
            };
            assert_eq!(
                error(&retry(&format!(r#""backoffMultiplier": {bad}"#))),
                expected,
                "{bad}"
            );
        }
        assert_eq!(
            error(&retry(r#""retryableStatusCodes": []"#)),
            format!("{at}.retryableStatusCodes: must be non-empty (unless perAttemptRecvTimeout is set)")
        );
        assert_eq!(
            error(&retry(r#""retryableStatusCodes": "<remove>""#)),
            format!("{at}.retryableStatusCodes: is required (unless perAttemptRecvTimeout is set)")
        );
        assert_eq!(
            error(&retry(r#""retryableStatusCodes": "UNAVAILABLE""#)),
            format!("{at}.retryableStatusCodes: must be an array of status codes")
        );
        // With a per-attempt timeout, no code is needed.
        let config = parse(&retry(
            r#""retryableStatusCodes": [], "perAttemptRecvTimeout": "1s""#,
        ));
        assert!(retry_policy_of(&config).retryable_status_codes.is_empty());
        parse(&retry(
            r#""retryableStatusCodes": "<remove>", "perAttemptRecvTimeout": "1s""#,
        ));
        assert_eq!(
            error(&retry(r#""perAttemptRecvTimeout": "0s""#)),
            format!("{at}.perAttemptRecvTimeout: must be greater than 0")
        );
        assert_eq!(
            error(&method(r#", "retryPolicy": []"#)),
            format!("{at}: must be an object")
        );
    }

    #[test]
    fn hedging_policy_rules() {
        let at = "methodConfig[0].hedgingPolicy";
        let hedged = |body: &str| method(&format!(r#", "hedgingPolicy": {{{body}}}"#));
        let config = parse(&hedged(r#""maxAttempts": 4"#));
        assert_eq!(
            hedging_policy_of(&config),
            &HedgingPolicy {
                max_attempts: 4,
                hedging_delay: Duration::ZERO,
                non_fatal_status_codes: CodeSet::default(),
            }
        );
        let config = parse(&hedged(
            r#""maxAttempts": 3, "hedgingDelay": "0.5s", "nonFatalStatusCodes": ["UNAVAILABLE", 4]"#,
        ));
        assert_eq!(
            hedging_policy_of(&config),
            &HedgingPolicy {
                max_attempts: 3,
                hedging_delay: Duration::from_millis(500),
                non_fatal_status_codes: codes(&[Code::Unavailable, Code::DeadlineExceeded]),
            }
        );
        parse(&hedged(
            r#""maxAttempts": 2, "hedgingDelay": "0s", "nonFatalStatusCodes": []"#,
        ));
        assert_eq!(error(&hedged("")), format!("{at}.maxAttempts: is required"));
        assert_eq!(
            error(&hedged(r#""maxAttempts": 1"#)),
            format!("{at}.maxAttempts: must be an integer greater than 1")
        );
        assert_eq!(
            error(&hedged(r#""maxAttempts": 2, "hedgingDelay": "-0.5s""#)),
            format!(
                r#"{at}.hedgingDelay: must be a duration: decimal seconds ending in "s", such as "0.1s""#
            )
        );
        assert_eq!(
            error(&hedged(r#""maxAttempts": 2, "nonFatalStatusCodes": [17]"#)),
            format!("{at}.nonFatalStatusCodes[0]: unknown status code 17: codes are 0 to 16")
        );
    }

    #[test]
    fn retry_and_hedging_are_exclusive() {
        let both = method(
            r#", "retryPolicy": {"maxAttempts": 2, "initialBackoff": "1s", "maxBackoff": "1s", "backoffMultiplier": 1, "retryableStatusCodes": [14]},
                "hedgingPolicy": {"maxAttempts": 2}"#,
        );
        assert_eq!(
            error(&both),
            "methodConfig[0]: retryPolicy and hedgingPolicy are exclusive: a method has one or the other"
        );
        // A `null` one is absent.
        parse(&method(
            r#", "retryPolicy": null, "hedgingPolicy": {"maxAttempts": 2}"#,
        ));
    }

    #[test]
    fn status_codes_by_name_any_case_or_number() {
        let set = code_set(
            "c",
            &serde_json::from_str(
                r#"["UNAVAILABLE", "unavailable", "Deadline_Exceeded", 0, 16, "data_loss"]"#,
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(
            set,
            codes(&[
                Code::Unavailable,
                Code::DeadlineExceeded,
                Code::Ok,
                Code::Unauthenticated,
                Code::DataLoss
            ])
        );
        assert!(set.contains(Code::Unavailable));
        assert!(!set.contains(Code::Internal));
        for (n, name) in CODE_NAMES.iter().enumerate() {
            let by_name = code_set("c", &Value::from(vec![name.to_ascii_lowercase()])).unwrap();
            let by_number = code_set("c", &Value::from(vec![n])).unwrap();
            assert_eq!(by_name, by_number);
            assert!(by_name.contains(Code::from_i32(n as i32)), "{name}");
            // tonic's own names agree with the table.
            assert_eq!(
                format!("{:?}", Code::from_i32(n as i32)).to_ascii_uppercase(),
                name.replace('_', "")
            );
        }
        let err = |json: &str| {
            code_set("c", &serde_json::from_str(json).unwrap())
                .unwrap_err()
                .to_string()
        };
        assert_eq!(
            err(r#"[14, "SOON"]"#),
            r#"c[1]: unknown status code "SOON""#
        );
        assert_eq!(err(r#"["14"]"#), r#"c[0]: unknown status code "14""#);
        assert_eq!(
            err(r#"[" UNAVAILABLE"]"#),
            r#"c[0]: unknown status code " UNAVAILABLE""#
        );
        assert_eq!(
            err("[17]"),
            "c[0]: unknown status code 17: codes are 0 to 16"
        );
        assert_eq!(
            err("[-1]"),
            "c[0]: unknown status code -1: codes are 0 to 16"
        );
        assert_eq!(
            err("[14.0]"),
            "c[0]: unknown status code 14.0: codes are 0 to 16"
        );
        assert_eq!(
            err("[null]"),
            r#"c[0]: must be a status code, a name ("UNAVAILABLE") or a number (14)"#
        );
        assert_eq!(
            error(&retry(
                r#""retryableStatusCodes": ["UNAVAILABLE", "RETRY"]"#
            )),
            r#"methodConfig[0].retryPolicy.retryableStatusCodes[1]: unknown status code "RETRY""#
        );
    }

    #[test]
    fn retry_throttling() {
        let throttling = |body: &str| {
            ServiceConfig::from_json(&format!(r#"{{"retryThrottling": {{{body}}}}}"#))
                .map(|c| c.retry_throttling().unwrap())
                .map_err(|e| e.to_string())
        };
        let read = |max: u32, ratio: u32| {
            Ok(Throttling {
                max_milli_tokens: max,
                milli_token_ratio: ratio,
            })
        };
        assert_eq!(
            throttling(r#""maxTokens": 10, "tokenRatio": 0.1"#),
            read(10_000, 100)
        );
        // The bucket a target's calls share: full, of that size and ratio.
        let bucket = throttling(r#""maxTokens": 2.5, "tokenRatio": 0.1"#)
            .unwrap()
            .budget();
        assert_eq!(
            (
                bucket.milli_tokens(),
                bucket.max_milli_tokens(),
                bucket.milli_token_ratio()
            ),
            (2_500, 2_500, 100)
        );
        // The digits past the third decimal are dropped, not rounded.
        assert_eq!(
            throttling(r#""maxTokens": 10, "tokenRatio": 0.5466"#),
            read(10_000, 546)
        );
        assert_eq!(
            throttling(r#""maxTokens": 10, "tokenRatio": 0.9999"#),
            read(10_000, 999)
        );
        assert_eq!(
            throttling(r#""maxTokens": 1000, "tokenRatio": 1.005"#),
            read(1_000_000, 1005)
        );
        assert_eq!(
            throttling(r#""maxTokens": 1, "tokenRatio": 0.001"#),
            read(1000, 1)
        );
        assert_eq!(
            throttling(r#""maxTokens": 2.5, "tokenRatio": 3"#),
            read(2500, 3000)
        );
        assert_eq!(
            throttling(r#""maxTokens": 0.0019, "tokenRatio": 1e2"#),
            read(1, 100_000)
        );
        assert_eq!(
            throttling(r#""maxTokens": 999.9999, "tokenRatio": 0.57"#),
            read(999_999, 570)
        );
        assert_eq!(
            throttling(r#""maxTokens": 1, "tokenRatio": 1e300"#),
            read(1000, u32::MAX)
        );
        let max = "retryThrottling.maxTokens: must be a number greater than 0 and at most 1000";
        for bad in ["0", "-1", "1000.001", "1001", "0.0001", "\"10\"", "1e10"] {
            assert_eq!(
                throttling(&format!(r#""maxTokens": {bad}, "tokenRatio": 1"#)),
                Err(max.into()),
                "{bad}"
            );
        }
        let ratio = "retryThrottling.tokenRatio: must be a number greater than 0";
        for bad in ["0", "-0.5", "-0.0", "0.0", "\"0.1\"", "[]"] {
            assert_eq!(
                throttling(&format!(r#""maxTokens": 1, "tokenRatio": {bad}"#)),
                Err(ratio.into()),
                "{bad}"
            );
        }
        assert_eq!(
            throttling(r#""maxTokens": 1, "tokenRatio": 0.0009"#),
            Err("retryThrottling.tokenRatio: must be at least 0.001 (digits past the third decimal are dropped)".into())
        );
        assert_eq!(
            throttling(r#""tokenRatio": 1"#),
            Err("retryThrottling.maxTokens: is required".into())
        );
        assert_eq!(
            throttling(r#""maxTokens": 1"#),
            Err("retryThrottling.tokenRatio: is required".into())
        );
        assert_eq!(
            error(r#"{"retryThrottling": 10}"#),
            "retryThrottling: must be an object"
        );
    }

    /// Floats whose `x * 1000.0` is off by an ulp.
    ///
    /// Their thousandths are read from the decimal.
    #[test]
    fn thousandths_from_the_decimal_not_the_float() {
        for (text, milli) in [
            ("1.005", 1005),
            ("0.57", 570),
            ("0.29", 290),
            ("4.35", 4350),
            ("0.001", 1),
            ("8.1", 8100),
        ] {
            let n: Number = serde_json::from_str(text).unwrap();
            assert_eq!(thousandths(&n), Some(milli), "{text}");
        }
        assert!((1.005f64 * 1000.0).floor() != 1005.0 || (4.35f64 * 1000.0).floor() != 4350.0);
    }

    /// The retry example of grpc-go, pasted as is.
    ///
    /// It is `examples/features/retry/client/main.go`.
    ///
    /// grpc-go reads its field names in any case, as Go's JSON does.
    ///
    /// gRPC's other clients, and this parser, do not, and say so.
    #[test]
    fn grpc_go_retry_example() {
        let go = r#"{
		"methodConfig": [{
		  "name": [{"service": "grpc.examples.echo.Echo"}],
		  "waitForReady": true,
		  "retryPolicy": {
			  "MaxAttempts": 4,
			  "InitialBackoff": ".01s",
			  "MaxBackoff": ".01s",
			  "BackoffMultiplier": 1.0,
			  "RetryableStatusCodes": [ "UNAVAILABLE" ]
		  }
		}]}"#;
        assert_eq!(
            error(go),
            r#"methodConfig[0].retryPolicy.maxAttempts: is required (found "MaxAttempts": field names are case-sensitive)"#
        );
        // With A6's field names, the config's values read as grpc-go reads them.
        let fixed = go
            .replace("\"Max", "\"max")
            .replace("\"Initial", "\"initial")
            .replace("\"Backoff", "\"backoff")
            .replace("\"Retryable", "\"retryable");
        let config = parse(&fixed);
        let m = config.method("/grpc.examples.echo.Echo/UnaryEcho").unwrap();
        assert_eq!(m.wait_for_ready, Some(true));
        assert_eq!(
            m.policy,
            Some(Policy::Retry(RetryPolicy {
                max_attempts: 4,
                initial_backoff: Duration::from_millis(10),
                max_backoff: Duration::from_millis(10),
                backoff_multiplier: 1.0,
                retryable_status_codes: codes(&[Code::Unavailable]),
                per_attempt_recv_timeout: None,
            }))
        );
    }

    /// A6's examples in one config.
    ///
    /// They are its retry policy, hedging policies and throttling.
    ///
    /// `loadBalancingPolicy` and the message sizes are there too, and ignored.
    #[test]
    fn a6_examples() {
        let config = parse(
            r#"{
  "loadBalancingPolicy": "round_robin",
  "methodConfig": [
    {
      "name": [{ "service": "echo.Echo", "method": "Get" }],
      "retryPolicy": {
        "maxAttempts": 4,
        "initialBackoff": "0.1s",
        "maxBackoff": "1s",
        "backoffMultiplier": 2,
        "retryableStatusCodes": [
          "UNAVAILABLE"
        ]
      },
      "waitForReady": true,
      "timeout": "10s",
      "maxRequestMessageBytes": 1024,
      "maxResponseMessageBytes": 4096
    },
    {
      "name": [{ "service": "echo.Echo" }],
      "hedgingPolicy": {
        "maxAttempts": 4,
        "hedgingDelay": "0.5s",
        "nonFatalStatusCodes": [
          "UNAVAILABLE",
          "INTERNAL",
          "ABORTED"
        ]
      }
    },
    {
      "name": [{}],
      "hedgingPolicy": {
        "maxAttempts": 4,
        "hedgingDelay": "0s",
        "nonFatalStatusCodes": []
      }
    }
  ],
  "retryThrottling": {
    "maxTokens": 10,
    "tokenRatio": 0.1
  }
}"#,
        );
        let get = config.method("/echo.Echo/Get").unwrap();
        assert_eq!(get.timeout, Some(Duration::from_secs(10)));
        assert!(
            matches!(&get.policy, Some(Policy::Retry(p)) if p.max_attempts == 4
            && p.retryable_status_codes == codes(&[Code::Unavailable]))
        );
        let put = config.method("/echo.Echo/Put").unwrap();
        assert_eq!(
            put.policy,
            Some(Policy::Hedging(HedgingPolicy {
                max_attempts: 4,
                hedging_delay: Duration::from_millis(500),
                non_fatal_status_codes: codes(&[Code::Unavailable, Code::Internal, Code::Aborted]),
            }))
        );
        let other = config.method("/other.Svc/Do").unwrap();
        assert!(matches!(&other.policy, Some(Policy::Hedging(p)) if p.hedging_delay.is_zero()));
        assert_eq!(
            config.retry_throttling(),
            Some(Throttling {
                max_milli_tokens: 10_000,
                milli_token_ratio: 100,
            })
        );
    }

    /// The error type's traits, as the public API's brief lists them.
    #[test]
    fn the_error_is_a_plain_value() {
        fn is_error<E: std::error::Error + Clone + PartialEq + Send + Sync + 'static>(_: &E) {}
        let e = ServiceConfig::from_json("[").unwrap_err();
        is_error(&e);
        assert_eq!(e.clone(), e);
        assert!(format!("{e:?}").contains("ServiceConfigError"));
    }

    /// No input panics.
    ///
    /// Inputs: random bytes, and valid configs mutated byte by byte.
    ///
    /// Mutations: deleted, replaced, duplicated, truncated.
    ///
    /// Each input is parsed or refused.
    #[test]
    fn nothing_panics() {
        use rand::rngs::SmallRng;
        use rand::{Rng, SeedableRng};

        let seeds = [
            retry(r#""perAttemptRecvTimeout": "1.5s""#),
            method(r#", "hedgingPolicy": {"maxAttempts": 9, "hedgingDelay": "0.000000001s", "nonFatalStatusCodes": [0, "internal"]}"#),
            r#"{"methodConfig": [{"name": [{}, {"service": "a", "method": "b"}], "timeout": "315576000000s"}],
                "retryThrottling": {"maxTokens": 999.9999, "tokenRatio": 0.0011}}"#
                .to_owned(),
        ];
        let alphabet = br#"{}[]":,.-+0123456789eEsS \tnulltruefalse/\u00e9"#;
        let mut rng = SmallRng::seed_from_u64(55);
        let (mut accepted, mut refused) = (0, 0);
        let mut check = |text: &[u8]| {
            let text = String::from_utf8_lossy(text);
            match ServiceConfig::from_json(&text) {
                Ok(config) => {
                    accepted += 1;
                    let _ = config.method("/a/b");
                    let _ = config.method("");
                }
                Err(e) => {
                    refused += 1;
                    assert!(!e.to_string().is_empty());
                }
            }
        };
        for _ in 0..2000 {
            let len = rng.random_range(0..64);
            let bytes: Vec<u8> = (0..len)
                .map(|_| alphabet[rng.random_range(0..alphabet.len())])
                .collect();
            check(&bytes);
        }
        for seed in &seeds {
            for _ in 0..3000 {
                let mut bytes = seed.clone().into_bytes();
                for _ in 0..rng.random_range(1..4) {
                    if bytes.is_empty() {
                        break;
                    }
                    let i = rng.random_range(0..bytes.len());
                    match rng.random_range(0..4) {
                        0 => {
                            bytes.remove(i);
                        }
                        1 => bytes[i] = alphabet[rng.random_range(0..alphabet.len())],
                        2 => bytes.insert(i, bytes[i]),
                        _ => bytes.truncate(i.max(1)),
                    }
                }
                check(&bytes);
            }
        }
        // The mutations reach past the JSON parser, into the rules.
        assert!(
            accepted > 100 && refused > 100,
            "{accepted} accepted, {refused} refused"
        );
    }
}
