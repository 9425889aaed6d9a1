//! Retrying against a real PostgreSQL, not a mock: serialization failures under SERIALIZABLE, a
//! deadlock, a unique violation, a session the server ends mid-transaction, and a server
//! stopped and restarted while a retried `connect` runs.
//!
//! They need the private server `scripts/with-postgres.sh` starts (it installs PostgreSQL when
//! it is missing), so they are `#[ignore]`d in a plain `cargo test`:
//!
//! ```sh
//! scripts/with-postgres.sh cargo test --all-features --test db -- --ignored
//! ```
//!
//! The script exports `DATABASE_URL`, and for the restart test `PGDATA`, `PG_CTL`, `PG_LOG` and
//! `PG_CTL_AS` (how to run `pg_ctl` as the cluster's owner).

use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use retry_jitter::sqlx::sqlstate;
use retry_jitter::{retry, Decision, RetryEvent, Transient};
use sqlx::postgres::{PgConnection, PgPool, PgPoolOptions};
use sqlx::Connection;
use tokio::sync::{Barrier, RwLock};
use tokio::task::JoinSet;

/// Tests hold it shared while they use the server; the restart test holds it alone while the
/// server is down.
static SERVER: RwLock<()> = RwLock::const_new(());

fn database_url() -> String {
    std::env::var("DATABASE_URL").expect(
        "DATABASE_URL is not set: run these tests with \
         scripts/with-postgres.sh cargo test --all-features --test db -- --ignored",
    )
}

async fn pool(max_connections: u32) -> PgPool {
    PgPoolOptions::new()
        .max_connections(max_connections)
        .acquire_timeout(Duration::from_secs(30))
        .connect(&database_url())
        .await
        .expect("the test server")
}

/// How many times a retried function ran, and what each retried error was.
#[derive(Default)]
struct Calls {
    calls: AtomicU32,
    retried: Mutex<Vec<String>>,
}

impl Calls {
    /// Counts an attempt; `true` for the first.
    fn attempt(&self) -> bool {
        self.calls.fetch_add(1, SeqCst) == 0
    }

    fn calls(&self) -> u32 {
        self.calls.load(SeqCst)
    }

    /// The `notify` hook: the SQLSTATE of the error about to be retried, or its `Io` kind.
    fn retrying(&self, error: &sqlx::Error, _: &RetryEvent) {
        let what = match (sqlstate(error), error) {
            (Some(code), _) => code.into_owned(),
            (None, sqlx::Error::Io(e)) => format!("io {:?}", e.kind()),
            (None, other) => format!("{other}"),
        };
        self.retried.lock().unwrap().push(what);
    }

    fn retried(&self) -> Vec<String> {
        self.retried.lock().unwrap().clone()
    }
}

const WRITERS: usize = 24;

/// One read-modify-write of the counter, under SERIALIZABLE: the whole transaction is the
/// attempt. The read is held a moment so that concurrent writers read the same value.
#[retry(attempts = 40, base = "10ms", cap = "500ms", on = retry_jitter::transient,
        notify = |e: &sqlx::Error, ev: &RetryEvent| calls.retrying(e, ev))]
async fn increment(pool: &PgPool, calls: &Calls) -> Result<i64, sqlx::Error> {
    calls.attempt();
    let mut tx = pool
        .begin_with("BEGIN ISOLATION LEVEL SERIALIZABLE")
        .await?;
    let n: i64 = sqlx::query_scalar("SELECT n FROM rmw_counter WHERE id = 1")
        .fetch_one(&mut *tx)
        .await?;
    tokio::time::sleep(Duration::from_millis(10)).await;
    sqlx::query("UPDATE rmw_counter SET n = $1 WHERE id = 1")
        .bind(n + 1)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(n + 1)
}

#[tokio::test]
#[ignore = "needs PostgreSQL: run with scripts/with-postgres.sh cargo test --all-features --test db -- --ignored"]
async fn concurrent_serializable_increments_all_commit_and_none_is_lost() {
    let _server = SERVER.read().await;
    let pool = pool(WRITERS as u32 + 2).await;
    sqlx::raw_sql(
        "DROP TABLE IF EXISTS rmw_counter;
         CREATE TABLE rmw_counter (id int PRIMARY KEY, n bigint NOT NULL);
         INSERT INTO rmw_counter VALUES (1, 0);",
    )
    .execute(&pool)
    .await
    .unwrap();

    let calls: Vec<Arc<Calls>> = (0..WRITERS).map(|_| Arc::default()).collect();
    let mut writers = JoinSet::new();
    for c in &calls {
        let (pool, c) = (pool.clone(), Arc::clone(c));
        writers.spawn(async move { increment(&pool, &c).await });
    }
    let mut seen: Vec<i64> = writers
        .join_all()
        .await
        .into_iter()
        .map(|r| r.expect("every increment commits"))
        .collect();

    // Exact: no increment lost, each writer committed on its own value.
    let n: i64 = sqlx::query_scalar("SELECT n FROM rmw_counter WHERE id = 1")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(n, WRITERS as i64);
    seen.sort_unstable();
    assert_eq!(seen, (1..=WRITERS as i64).collect::<Vec<_>>());

    // Conflicts happened, were serialization failures, and each cost exactly one more call.
    let retried: Vec<String> = calls.iter().flat_map(|c| c.retried()).collect();
    let total_calls: u32 = calls.iter().map(|c| c.calls()).sum();
    let most = calls.iter().map(|c| c.calls()).max().unwrap_or(0);
    println!(
        "{WRITERS} writers, {} serialization failures retried, {total_calls} transactions run, \
         at most {most} by one writer",
        retried.len()
    );
    assert!(!retried.is_empty(), "no conflict: the test raced nothing");
    assert!(retried.iter().all(|s| s == "40001"), "{retried:?}");
    assert_eq!(total_calls as usize, WRITERS + retried.len());
}

/// Adds 1 to row `first`, then to row `second`, in one transaction. On its first attempt it
/// waits, holding `first`, until the other caller holds its own first row: with opposite
/// orders, each then waits for the other's lock, a deadlock the server breaks.
#[retry(attempts = 5, base = "10ms", on = retry_jitter::transient,
        notify = |e: &sqlx::Error, ev: &RetryEvent| calls.retrying(e, ev))]
async fn add_to_both(
    pool: &PgPool,
    first: i32,
    second: i32,
    both_hold_one: &Barrier,
    calls: &Calls,
) -> Result<(), sqlx::Error> {
    let first_attempt = calls.attempt();
    let mut tx = pool.begin().await?;
    let add = "UPDATE deadlock_pair SET n = n + 1 WHERE id = $1";
    sqlx::query(add).bind(first).execute(&mut *tx).await?;
    if first_attempt {
        both_hold_one.wait().await;
    }
    sqlx::query(add).bind(second).execute(&mut *tx).await?;
    tx.commit().await
}

#[tokio::test]
#[ignore = "needs PostgreSQL: run with scripts/with-postgres.sh cargo test --all-features --test db -- --ignored"]
async fn a_deadlock_victim_is_retried_and_both_transactions_commit() {
    let _server = SERVER.read().await;
    let pool = pool(4).await;
    sqlx::raw_sql(
        "DROP TABLE IF EXISTS deadlock_pair;
         CREATE TABLE deadlock_pair (id int PRIMARY KEY, n int NOT NULL);
         INSERT INTO deadlock_pair VALUES (1, 0), (2, 0);",
    )
    .execute(&pool)
    .await
    .unwrap();

    let barrier = Barrier::new(2);
    let (a, b) = (Calls::default(), Calls::default());
    let (ra, rb) = tokio::join!(
        add_to_both(&pool, 1, 2, &barrier, &a),
        add_to_both(&pool, 2, 1, &barrier, &b),
    );
    ra.expect("the first transaction commits");
    rb.expect("the second transaction commits");

    // One was the victim: retried once, for 40P01; the other ran once.
    let retried = [a.retried(), b.retried()].concat();
    println!(
        "deadlock: retried {retried:?}; calls {} + {}",
        a.calls(),
        b.calls()
    );
    assert_eq!(retried, ["40P01"]);
    assert_eq!(a.calls() + b.calls(), 3);
    let rows: Vec<(i32, i32)> = sqlx::query_as("SELECT id, n FROM deadlock_pair ORDER BY id")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert_eq!(rows, [(1, 2), (2, 2)], "each transaction applied once");
}

#[retry(attempts = 5, base = "10ms", on = retry_jitter::transient,
        notify = |e: &sqlx::Error, ev: &RetryEvent| calls.retrying(e, ev))]
async fn register(pool: &PgPool, email: &str, calls: &Calls) -> Result<(), sqlx::Error> {
    calls.attempt();
    sqlx::query("INSERT INTO unique_users (email) VALUES ($1)")
        .bind(email)
        .execute(pool)
        .await?;
    Ok(())
}

#[tokio::test]
#[ignore = "needs PostgreSQL: run with scripts/with-postgres.sh cargo test --all-features --test db -- --ignored"]
async fn a_unique_violation_is_tried_exactly_once() {
    let _server = SERVER.read().await;
    let pool = pool(2).await;
    sqlx::raw_sql(
        "DROP TABLE IF EXISTS unique_users;
         CREATE TABLE unique_users (email text PRIMARY KEY);",
    )
    .execute(&pool)
    .await
    .unwrap();

    let first = Calls::default();
    register(&pool, "ada@example.com", &first).await.unwrap();
    assert_eq!(first.calls(), 1);

    let again = Calls::default();
    let err = register(&pool, "ada@example.com", &again)
        .await
        .unwrap_err();
    // The server's own error, unchanged, after one call.
    assert_eq!(sqlstate(&err).as_deref(), Some("23505"), "{err:?}");
    assert!(err.as_database_error().unwrap().is_unique_violation());
    assert_eq!(err.decision(), Decision::Stop);
    assert_eq!((again.calls(), again.retried()), (1, vec![]));
    let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM unique_users")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(rows, 1);
}

/// Inserts a row in a transaction; on the first attempt the server ends the session (as a
/// failover or an administrator does) before the commit.
#[retry(attempts = 5, base = "10ms", on = retry_jitter::transient,
        notify = |e: &sqlx::Error, ev: &RetryEvent| calls.retrying(e, ev))]
async fn insert_while_killed(pool: &PgPool, calls: &Calls) -> Result<(), sqlx::Error> {
    let first_attempt = calls.attempt();
    let mut tx = pool.begin().await?;
    sqlx::query("INSERT INTO killed_rows (attempt) VALUES ($1)")
        .bind(calls.calls() as i32)
        .execute(&mut *tx)
        .await?;
    if first_attempt {
        let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
            .fetch_one(&mut *tx)
            .await?;
        let killed: bool = sqlx::query_scalar("SELECT pg_terminate_backend($1)")
            .bind(pid)
            .fetch_one(pool)
            .await?;
        assert!(killed);
    }
    sqlx::query("SELECT 1").execute(&mut *tx).await?;
    tx.commit().await
}

#[tokio::test]
#[ignore = "needs PostgreSQL: run with scripts/with-postgres.sh cargo test --all-features --test db -- --ignored"]
async fn a_session_ended_by_the_server_mid_transaction_is_retried_on_a_new_connection() {
    let _server = SERVER.read().await;
    let pool = pool(3).await;
    sqlx::raw_sql(
        "DROP TABLE IF EXISTS killed_rows;
         CREATE TABLE killed_rows (attempt int NOT NULL);",
    )
    .execute(&pool)
    .await
    .unwrap();

    let calls = Calls::default();
    insert_while_killed(&pool, &calls).await.unwrap();

    // The first attempt's row died with its session: only the second one's is there.
    let retried = calls.retried();
    println!("session ended mid-transaction: retried {retried:?}");
    assert_eq!(calls.calls(), 2);
    assert_eq!(retried.len(), 1);
    let rows: Vec<i32> = sqlx::query_scalar("SELECT attempt FROM killed_rows")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert_eq!(rows, [2]);
}

/// `pg_ctl` as the cluster's owner, with the script's environment.
fn pg_ctl(args: &[&str]) {
    let var = |name| std::env::var(name).unwrap_or_else(|_| panic!("{name}: see the script"));
    let prefix = std::env::var("PG_CTL_AS").unwrap_or_default();
    let mut words: Vec<String> = prefix.split_whitespace().map(String::from).collect();
    words.extend([var("PG_CTL"), "-D".into(), var("PGDATA")]);
    words.extend(args.iter().map(|a| a.to_string()));
    let status = Command::new(&words[0])
        .args(&words[1..])
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("{words:?}: {e}"));
    assert!(status.success(), "{words:?}: {status}");
}

#[retry(attempts = 40, base = "50ms", cap = "500ms", max_elapsed = "30s",
        on = retry_jitter::transient,
        notify = |e: &sqlx::Error, ev: &RetryEvent| calls.retrying(e, ev))]
async fn connect(url: &str, calls: &Calls) -> Result<PgConnection, sqlx::Error> {
    calls.attempt();
    PgConnection::connect(url).await
}

#[tokio::test]
#[ignore = "needs PostgreSQL: run with scripts/with-postgres.sh cargo test --all-features --test db -- --ignored"]
async fn a_connect_retried_while_the_server_restarts_connects_after_the_restart() {
    let _alone = SERVER.write().await;
    let url = database_url();
    pg_ctl(&["-m", "fast", "-w", "stop"]);

    // The server comes back 1.5 s from now; the retried connect starts at once.
    let restart = std::thread::spawn(|| {
        std::thread::sleep(Duration::from_millis(1500));
        let restarting = Instant::now();
        let log = std::env::var("PG_LOG").expect("PG_LOG: see the script");
        pg_ctl(&["-l", &log, "-w", "-t", "60", "start"]);
        restarting
    });
    let calls = Calls::default();
    let outcome = connect(&url, &calls).await;
    let connected = Instant::now();
    let restarting = restart.join().expect("the server restarts");

    let mut conn = outcome.expect("connected after the restart");
    let one: i32 = sqlx::query_scalar("SELECT 1")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(one, 1);
    assert!(connected > restarting, "connected before the restart began");
    // Refused while the server was down (and perhaps 57P03 while it started): all retried.
    let retried = calls.retried();
    println!(
        "restart: {} calls, retried {:?}",
        calls.calls(),
        summary(&retried)
    );
    assert!(retried.len() >= 2, "{retried:?}");
    assert_eq!(calls.calls() as usize, retried.len() + 1);
    assert!(
        retried
            .iter()
            .all(|e| e == "io ConnectionRefused" || e == "57P03"),
        "{retried:?}"
    );
    assert_eq!(retried[0], "io ConnectionRefused");
    conn.close().await.unwrap();
}

/// `["a", "a", "b"]` as `[("a", 2), ("b", 1)]`.
fn summary(items: &[String]) -> Vec<(&str, usize)> {
    let mut out: Vec<(&str, usize)> = Vec::new();
    for item in items {
        match out.iter_mut().find(|(i, _)| *i == item) {
            Some((_, n)) => *n += 1,
            None => out.push((item, 1)),
        }
    }
    out
}
