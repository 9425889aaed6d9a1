//! sqlx and PostgreSQL: `Transient` for `sqlx::Error`, decided by the server's SQLSTATE
//! (feature `sqlx`).
//!
//! `#[retry(on = retry_jitter::transient)]` on a function returning `Result<T, sqlx::Error>`
//! retries what waiting can fix.
//!
//! A transaction that lost a race, a connection that broke, a server that is restarting.
//!
//! What waiting cannot fix is returned at once:
//!
//! | error | SQLSTATE (name) | decision | why |
//! |---|---|---|---|
//! | `Database` | `40001` serialization_failure | retry | a SERIALIZABLE (or REPEATABLE READ) transaction lost to a concurrent one; run alone, it commits |
//! | `Database` | `40P01` deadlock_detected | retry | the server aborted this transaction to break a lock cycle; the other one goes on, and a new attempt waits for its locks |
//! | `Database` | class `08` connection_exception (`08000`, `08003` connection_does_not_exist, `08006` connection_failure, `08001`, `08004`, `08007`, `08P01`) | retry | the connection failed, not the statement; a new connection may work |
//! | `Database` | `57P01` admin_shutdown | retry | the server is shutting down or failing over, or an administrator ended the session; its successor will answer |
//! | `Database` | `57P02` crash_shutdown | retry | another server process crashed and the server is restarting |
//! | `Database` | `57P03` cannot_connect_now | retry | the server is starting up (or in recovery) |
//! | `Database` | `53300` too_many_connections | retry | a slot frees when another client disconnects |
//! | `Database` | `55P03` lock_not_available | retry | `NOWAIT` or `lock_timeout`: the lock is held now, not for ever |
//! | `Database` | `23xxx` integrity_constraint_violation (`23505` unique_violation, `23503` foreign_key_violation, `23502` not_null_violation, `23514` check_violation…) | stop | the data break a constraint: the same statement breaks it again |
//! | `Database` | `42xxx` syntax_error_or_access_rule_violation (`42601` syntax_error, `42501` insufficient_privilege, `42P01` undefined_table…) | stop | a wrong query or a missing grant stays wrong |
//! | `Database` | `22xxx` data_exception (`22P02` invalid_text_representation, `22012` division_by_zero…) | stop | the values are wrong, not the moment |
//! | `Database` | every other SQLSTATE (`57014` query_canceled, `40003` statement_completion_unknown, `XX000` internal_error…), or none | stop | nothing says that waiting helps |
//! | `Io` | | by the `std::io::Error` table ([`Transient`] for `io::Error`) | a refused, reset or cut connection and a timeout retry; `NotFound`, `PermissionDenied`… (a bad socket path) do not |
//! | `PoolTimedOut` | | retry | every pooled connection was busy, or new ones failed, until the pool's `acquire_timeout` |
//! | `Protocol` from a dropped connection | | retry | the conversation lost its place: an answer to another request, an unknown message type, an unexpected message (see below) |
//! | any other `Protocol` | | stop | an unsupported authentication method, a malformed message: a bug or a misconfiguration |
//! | `RowNotFound`, `ColumnNotFound`, `ColumnIndexOutOfBounds`, `TypeNotFound`, `ColumnDecode`, `Decode`, `Encode` | | stop | the query and the Rust types disagree; the next call disagrees the same way |
//! | `Configuration`, `Tls`, `InvalidArgument`, `PoolClosed`, and every other variant | | stop | a wrong URL, certificate or argument, or a pool closed on purpose |
//!
//! A `Protocol` error is taken to come from a dropped connection by its message.
//!
//! The messages are those sqlx's PostgreSQL driver gives when what it reads is not the answer
//! it waits for:
//!
//! - `expecting … but received …`, `expected …, got …`;
//! - `unexpected message`, `unknown message type`;
//! - `received more ReadyForQuery messages than expected`.
//!
//! [`sqlstate`] is `None` for such an error.
//!
//! The guide's `databases` page has the walkthrough.
//!
//! **The unit of retry is the whole transaction.**
//!
//! After a serialization failure or a deadlock, PostgreSQL has aborted the transaction.
//!
//! Its next statement fails with `25P02` (in_failed_sql_transaction, not retried).
//!
//! Retry the function that runs `begin` … `commit`, never one statement inside it:
//!
//! ```no_run
//! use retry_jitter::sqlx::sqlstate;
//! use sqlx::PgPool;
//!
//! // With `#[retry(on = retry_jitter::transient)]` on it, a lost race runs it again from
//! // `begin`: the balance is read anew, and the transfer applied once.
//! async fn transfer(pool: &PgPool, from: i64, to: i64, amount: i64) -> Result<(), sqlx::Error> {
//!     let mut tx = pool.begin().await?;
//!     sqlx::query("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE").execute(&mut *tx).await?;
//!     sqlx::query("UPDATE accounts SET balance = balance - $1 WHERE id = $2")
//!         .bind(amount).bind(from).execute(&mut *tx).await?;
//!     sqlx::query("UPDATE accounts SET balance = balance + $1 WHERE id = $2")
//!         .bind(amount).bind(to).execute(&mut *tx).await?;
//!     tx.commit().await
//! }
//! ```
//!
//! A connection lost during `COMMIT` leaves the outcome unknown: a retry may run a committed
//! transaction again.
//!
//! Make a blind write idempotent: a key made once, outside the retried function, and
//! `INSERT … ON CONFLICT DO NOTHING`.
//!
//! `#[retry(timeout = …)]` needs `From<TimedOut>`, which `sqlx::Error` cannot have here.
//!
//! Wrap it in an error of your own, or prefer the server's `statement_timeout` and
//! `lock_timeout` (`55P03`, retried).

use std::borrow::Cow;

use crate::policy::transient::Transient;
use crate::policy::Decision;

/// The SQLSTATE of an error the server returned (`sqlx::Error::Database`), e.g. `"40001"`;
/// `None` for every other error.
///
/// ```
/// use retry_jitter::sqlx::sqlstate;
/// # use std::{borrow::Cow, error::Error as StdError, fmt};
/// # #[derive(Debug)] struct PgError(&'static str);
/// # impl fmt::Display for PgError {
/// #     fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str("could not serialize access") }
/// # }
/// # impl StdError for PgError {}
/// # impl sqlx::error::DatabaseError for PgError {
/// #     fn message(&self) -> &str { "could not serialize access" }
/// #     fn code(&self) -> Option<Cow<'_, str>> { Some(Cow::Borrowed(self.0)) }
/// #     fn as_error(&self) -> &(dyn StdError + Send + Sync + 'static) { self }
/// #     fn as_error_mut(&mut self) -> &mut (dyn StdError + Send + Sync + 'static) { self }
/// #     fn into_error(self: Box<Self>) -> Box<dyn StdError + Send + Sync + 'static> { self }
/// #     fn kind(&self) -> sqlx::error::ErrorKind { sqlx::error::ErrorKind::Other }
/// # }
///
/// // What the server says when a SERIALIZABLE transaction loses (a `PgDatabaseError`).
/// let lost = sqlx::Error::Database(Box::new(PgError("40001")));
/// assert_eq!(sqlstate(&lost).as_deref(), Some("40001"));
/// assert_eq!(sqlstate(&sqlx::Error::RowNotFound), None);
/// ```
pub fn sqlstate(error: &sqlx::Error) -> Option<Cow<'_, str>> {
    error.as_database_error()?.code()
}

/// The decision for a SQLSTATE, by the module's table: `40001`, `40P01`, class `08`, `57P01`,
/// `57P02`, `57P03`, `53300` and `55P03` are retried, every other code is not.
///
/// For an error type of your own that carries the server's code (from another driver, say).
///
/// ```
/// use retry_jitter::sqlx::classify_sqlstate;
/// use retry_jitter::Decision;
///
/// assert_eq!(classify_sqlstate("40001"), Decision::Retry); // serialization_failure
/// assert_eq!(classify_sqlstate("08006"), Decision::Retry); // connection_failure
/// assert_eq!(classify_sqlstate("23505"), Decision::Stop); // unique_violation
/// assert_eq!(classify_sqlstate("42601"), Decision::Stop); // syntax_error
/// ```
pub fn classify_sqlstate(code: &str) -> Decision {
    Decision::from(
        code.starts_with("08")
            || matches!(
                code,
                "40001" | "40P01" | "57P01" | "57P02" | "57P03" | "53300" | "55P03"
            ),
    )
}

/// Whether a `Protocol` error's message is one sqlx's PostgreSQL driver gives when what it
/// reads is not the answer it waits for: a connection dropped or cut mid-exchange.
fn lost_its_place(message: &str) -> bool {
    (message.contains("expecting ") && message.contains(" but received "))
        || (message.contains("expected ") && message.contains(", got "))
        || message.contains("unexpected message")
        || message.contains("unknown message type")
        || message.contains("more ReadyForQuery messages than expected")
}

/// By the module's table: the server's SQLSTATE for a `Database` error ([`classify_sqlstate`]),
/// the `std::io::Error` table for `Io`, retry for `PoolTimedOut` and a `Protocol` error from a
/// dropped connection, stop for everything else.
///
/// ```
/// use retry_jitter::{Decision, Transient};
/// use std::io;
///
/// let refused = sqlx::Error::Io(io::Error::from(io::ErrorKind::ConnectionRefused));
/// assert_eq!(refused.decision(), Decision::Retry); // the server is restarting
/// assert_eq!(sqlx::Error::PoolTimedOut.decision(), Decision::Retry);
/// assert_eq!(sqlx::Error::RowNotFound.decision(), Decision::Stop); // it is not there
///
/// let out_of_step = "Postgres protocol error: expected ReadyForQuery, got DataRow";
/// assert_eq!(sqlx::Error::Protocol(out_of_step.into()).decision(), Decision::Retry);
/// let unsupported = "unsupported authentication method: KerberosV5";
/// assert_eq!(sqlx::Error::Protocol(unsupported.into()).decision(), Decision::Stop);
/// ```
impl Transient for sqlx::Error {
    fn decision(&self) -> Decision {
        match self {
            sqlx::Error::Database(e) => match e.code() {
                Some(code) => classify_sqlstate(&code),
                None => Decision::Stop,
            },
            sqlx::Error::Io(e) => e.decision(),
            sqlx::Error::PoolTimedOut => Decision::Retry,
            sqlx::Error::Protocol(message) => Decision::from(lost_its_place(message)),
            _ => Decision::Stop,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlx::error::{DatabaseError, ErrorKind};
    use std::error::Error as StdError;
    use std::{fmt, io};

    /// A database error with a SQLSTATE, as `PgDatabaseError` (which only the driver makes).
    #[derive(Debug)]
    struct Coded(Option<&'static str>);
    impl fmt::Display for Coded {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "SQLSTATE {:?}", self.0)
        }
    }
    impl StdError for Coded {}
    impl DatabaseError for Coded {
        fn message(&self) -> &str {
            "a server error"
        }
        fn code(&self) -> Option<Cow<'_, str>> {
            self.0.map(Cow::Borrowed)
        }
        fn as_error(&self) -> &(dyn StdError + Send + Sync + 'static) {
            self
        }
        fn as_error_mut(&mut self) -> &mut (dyn StdError + Send + Sync + 'static) {
            self
        }
        fn into_error(self: Box<Self>) -> Box<dyn StdError + Send + Sync + 'static> {
            self
        }
        fn kind(&self) -> ErrorKind {
            ErrorKind::Other
        }
    }

    fn server(code: &'static str) -> sqlx::Error {
        sqlx::Error::Database(Box::new(Coded(Some(code))))
    }

    #[test]
    fn sqlstates_follow_the_documented_table() {
        let retry = [
            "40001", "40P01", "08000", "08003", "08006", "08001", "08004", "08007", "08P01",
            "57P01", "57P02", "57P03", "53300", "55P03",
        ];
        let stop = [
            "23505", "23503", "23502", "23514", "23P01", "42601", "42501", "42P01", "42703",
            "22P02", "22012", "22001", "25P02", "57014", "40003", "40002", "53100", "XX000",
            "00000", "", "4", "0", "57P04", "55000",
        ];
        for code in retry {
            assert_eq!(server(code).decision(), Decision::Retry, "{code}");
            assert_eq!(sqlstate(&server(code)).as_deref(), Some(code));
        }
        for code in stop {
            assert_eq!(server(code).decision(), Decision::Stop, "{code}");
        }
        let no_code = sqlx::Error::Database(Box::new(Coded(None)));
        assert_eq!(
            (no_code.decision(), sqlstate(&no_code)),
            (Decision::Stop, None)
        );
    }

    #[test]
    fn io_errors_follow_the_io_table() {
        for (kind, decision) in [
            (io::ErrorKind::ConnectionRefused, Decision::Retry),
            (io::ErrorKind::ConnectionReset, Decision::Retry),
            (io::ErrorKind::UnexpectedEof, Decision::Retry),
            (io::ErrorKind::BrokenPipe, Decision::Retry),
            (io::ErrorKind::TimedOut, Decision::Retry),
            (io::ErrorKind::NotFound, Decision::Stop),
            (io::ErrorKind::PermissionDenied, Decision::Stop),
            (io::ErrorKind::InvalidData, Decision::Stop),
        ] {
            let e = sqlx::Error::Io(io::Error::from(kind));
            assert_eq!(e.decision(), decision, "{kind:?}");
            assert_eq!(sqlstate(&e), None);
        }
    }

    #[test]
    fn protocol_errors_are_retried_only_from_a_connection_that_lost_its_place() {
        // Messages as sqlx-postgres formats them (`err_protocol!` adds the module and line).
        let retry = [
            "expecting ParseComplete but received CommandComplete (sqlx_postgres::connection::executor:138)",
            "expecting RowDescription or NoData but received DataRow",
            "Postgres protocol error: expected ReadyForQuery, got DataRow",
            "establish: unexpected message: DataRow",
            "unknown message type: '\\0'",
            "received more ReadyForQuery messages than expected",
        ];
        let stop = [
            "unsupported authentication method: KerberosV5",
            "unknown authentication method: 13",
            "message size out of range for protocol: 2147483648",
            "too many parameter format codes (70000)",
            "expected NUL in byte sequence",
            "unknown severity: \"NOPE\"",
        ];
        for message in retry {
            let e = sqlx::Error::Protocol(message.into());
            assert_eq!(e.decision(), Decision::Retry, "{message}");
        }
        for message in stop {
            let e = sqlx::Error::Protocol(message.into());
            assert_eq!(e.decision(), Decision::Stop, "{message}");
        }
    }

    #[test]
    fn other_variants_are_not_retried_but_a_pool_timeout_is() {
        assert_eq!(sqlx::Error::PoolTimedOut.decision(), Decision::Retry);
        let stop = [
            sqlx::Error::RowNotFound,
            sqlx::Error::PoolClosed,
            sqlx::Error::WorkerCrashed,
            sqlx::Error::BeginFailed,
            sqlx::Error::InvalidSavePointStatement,
            sqlx::Error::InvalidArgument("bad".into()),
            sqlx::Error::ColumnNotFound("balance".into()),
            sqlx::Error::ColumnIndexOutOfBounds { index: 3, len: 2 },
            sqlx::Error::TypeNotFound {
                type_name: "money2".into(),
            },
            sqlx::Error::Configuration("no host".into()),
            sqlx::Error::Tls("bad certificate".into()),
            sqlx::Error::Decode("not an i64".into()),
            sqlx::Error::Encode("too long".into()),
            sqlx::Error::ColumnDecode {
                index: "0".into(),
                source: "not an i64".into(),
            },
        ];
        for e in stop {
            assert_eq!(e.decision(), Decision::Stop, "{e:?}");
        }
    }

    #[test]
    fn the_classifier_of_the_attribute_reads_the_same_table() {
        assert_eq!(crate::transient(&server("40P01")), Decision::Retry);
        assert_eq!(crate::transient(&server("23505")), Decision::Stop);
    }
}
