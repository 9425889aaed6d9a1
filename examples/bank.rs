//! `scripts/with-postgres.sh cargo run --example bank --features sqlx`: concurrent transfers
//! between a few accounts under SERIALIZABLE, against a real PostgreSQL (`DATABASE_URL`).
//!
//! Each transfer is one `#[retry(on = retry_jitter::transient)] async fn` that runs its whole
//! transaction — `BEGIN` … `COMMIT` — per attempt: a serialization failure (40001) or a
//! deadlock (40P01) aborts the transaction, and the next attempt reads the balances anew. At the
//! end it prints how many conflicts were retried and checks that the books balance: the total
//! is what it was, and every balance is its opening balance plus the ledger's transfers.

use std::process::ExitCode;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};
use std::time::Instant;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use retry_jitter::sqlx::sqlstate;
use retry_jitter::{retry, GiveUp, RetryEvent};
use sqlx::postgres::{PgPool, PgPoolOptions};

const ACCOUNTS: i32 = 8;
const OPENING: i64 = 1_000;
const TELLERS: i64 = 12;
const TRANSFERS_EACH: i64 = 25;

static ATTEMPTS: AtomicU32 = AtomicU32::new(0);
static SERIALIZATION_FAILURES: AtomicU32 = AtomicU32::new(0);
static DEADLOCKS: AtomicU32 = AtomicU32::new(0);
static OTHER_RETRIES: AtomicU32 = AtomicU32::new(0);
static MOST_CALLS: AtomicU32 = AtomicU32::new(1);
static GAVE_UP: AtomicU32 = AtomicU32::new(0);

/// A transfer, made (with its id) once, before the first attempt.
struct Transfer {
    id: i64,
    from: i32,
    to: i32,
    amount: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// Committed.
    Moved,
    /// Not enough money: rolled back, nothing written.
    Declined,
    /// An earlier attempt committed it, though its reply was lost.
    AlreadyDone,
}

fn count_retry(e: &sqlx::Error, ev: &RetryEvent) {
    let counter = match sqlstate(e).as_deref() {
        Some("40001") => &SERIALIZATION_FAILURES,
        Some("40P01") => &DEADLOCKS,
        _ => &OTHER_RETRIES,
    };
    counter.fetch_add(1, Relaxed);
    MOST_CALLS.fetch_max(ev.attempt + 1, Relaxed);
}

fn count_give_up(e: &sqlx::Error, _: &GiveUp) {
    eprintln!("a transfer gave up: {e}");
    GAVE_UP.fetch_add(1, Relaxed);
}

/// Moves `t.amount` from one account to another, if the money is there. The unit of retry is
/// the whole transaction: every attempt begins, reads, writes and commits anew.
#[retry(attempts = 12, base = "10ms", cap = "1s", on = retry_jitter::transient,
        notify = count_retry, give_up = count_give_up)]
async fn transfer(pool: &PgPool, t: &Transfer) -> Result<Outcome, sqlx::Error> {
    ATTEMPTS.fetch_add(1, Relaxed);
    let mut tx = pool
        .begin_with("BEGIN ISOLATION LEVEL SERIALIZABLE")
        .await?;
    // The ledger row first, keyed by the transfer's id: if an attempt committed but the reply
    // was lost (a connection cut during COMMIT), the retry finds the row and moves nothing.
    let fresh = sqlx::query(
        "INSERT INTO transfers (id, from_account, to_account, amount) VALUES ($1, $2, $3, $4)
         ON CONFLICT (id) DO NOTHING",
    )
    .bind(t.id)
    .bind(t.from)
    .bind(t.to)
    .bind(t.amount)
    .execute(&mut *tx)
    .await?
    .rows_affected()
        == 1;
    if !fresh {
        return Ok(Outcome::AlreadyDone);
    }
    let balance: i64 = sqlx::query_scalar("SELECT balance FROM accounts WHERE id = $1")
        .bind(t.from)
        .fetch_one(&mut *tx)
        .await?;
    if balance < t.amount {
        return Ok(Outcome::Declined); // `tx` is dropped: rolled back, ledger row included
    }
    sqlx::query("UPDATE accounts SET balance = balance - $1 WHERE id = $2")
        .bind(t.amount)
        .bind(t.from)
        .execute(&mut *tx)
        .await?;
    sqlx::query("UPDATE accounts SET balance = balance + $1 WHERE id = $2")
        .bind(t.amount)
        .bind(t.to)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(Outcome::Moved)
}

/// One teller's transfers, one after another, between random accounts.
async fn teller(pool: PgPool, teller: i64) -> Vec<Outcome> {
    let mut rng = SmallRng::seed_from_u64(teller as u64);
    let mut outcomes = Vec::new();
    for k in 0..TRANSFERS_EACH {
        let from = rng.random_range(1..=ACCOUNTS);
        let to = (from + rng.random_range(0..ACCOUNTS - 1)) % ACCOUNTS + 1;
        let t = Transfer {
            id: teller * 1_000 + k,
            from,
            to,
            amount: rng.random_range(1..=200),
        };
        // An error is one that was not worth retrying, or retries ran out: `count_give_up`
        // reported it, and the teller goes on with the next transfer.
        if let Ok(outcome) = transfer(&pool, &t).await {
            outcomes.push(outcome);
        }
    }
    outcomes
}

async fn open_the_bank(pool: &PgPool) -> Result<(), sqlx::Error> {
    sqlx::raw_sql(
        "DROP TABLE IF EXISTS transfers, accounts;
         CREATE TABLE accounts (id int PRIMARY KEY, balance bigint NOT NULL);
         CREATE TABLE transfers (
             id bigint PRIMARY KEY,
             from_account int NOT NULL REFERENCES accounts,
             to_account int NOT NULL REFERENCES accounts,
             amount bigint NOT NULL
         );",
    )
    .execute(pool)
    .await?;
    sqlx::query("INSERT INTO accounts SELECT id, $1 FROM generate_series(1, $2) AS id")
        .bind(OPENING)
        .bind(ACCOUNTS)
        .execute(pool)
        .await?;
    Ok(())
}

/// Each account: (id, balance, opening balance + what the ledger moved in − out).
async fn books(pool: &PgPool) -> Result<Vec<(i32, i64, i64)>, sqlx::Error> {
    sqlx::query_as(
        "SELECT a.id, a.balance,
                $1 + COALESCE(SUM(CASE WHEN t.to_account = a.id THEN t.amount END), 0)::bigint
                   - COALESCE(SUM(CASE WHEN t.from_account = a.id THEN t.amount END), 0)::bigint
         FROM accounts a LEFT JOIN transfers t ON a.id IN (t.from_account, t.to_account)
         GROUP BY a.id ORDER BY a.id",
    )
    .bind(OPENING)
    .fetch_all(pool)
    .await
}

#[tokio::main]
async fn main() -> Result<ExitCode, sqlx::Error> {
    let Ok(url) = std::env::var("DATABASE_URL") else {
        eprintln!(
            "DATABASE_URL is not set. Run it against a throw-away server:\n  \
             scripts/with-postgres.sh cargo run --example bank --features sqlx"
        );
        return Ok(ExitCode::from(2));
    };
    let pool = PgPoolOptions::new()
        .max_connections(TELLERS as u32)
        .connect(&url)
        .await?;
    open_the_bank(&pool).await?;
    println!(
        "{ACCOUNTS} accounts of {OPENING}; {TELLERS} tellers make {TRANSFERS_EACH} transfers \
         each, concurrently, under SERIALIZABLE"
    );

    let started = Instant::now();
    let tellers: Vec<_> = (0..TELLERS)
        .map(|t| tokio::spawn(teller(pool.clone(), t)))
        .collect();
    let mut outcomes = Vec::new();
    for t in tellers {
        outcomes.extend(t.await.expect("a teller panicked"));
    }
    let count = |o: Outcome| outcomes.iter().filter(|&&x| x == o).count();
    let (serialization, deadlocks) = (
        SERIALIZATION_FAILURES.load(Relaxed),
        DEADLOCKS.load(Relaxed),
    );
    println!(
        "{} transfers in {:.1?}: {} moved, {} declined (not enough money), {} already done, {} gave up",
        TELLERS * TRANSFERS_EACH,
        started.elapsed(),
        count(Outcome::Moved),
        count(Outcome::Declined),
        count(Outcome::AlreadyDone),
        GAVE_UP.load(Relaxed),
    );
    println!(
        "conflicts retried: {} — {serialization} serialization failures (40001), {deadlocks} \
         deadlocks (40P01), {} other; {} transactions run, at most {} for one transfer",
        serialization + deadlocks + OTHER_RETRIES.load(Relaxed),
        OTHER_RETRIES.load(Relaxed),
        ATTEMPTS.load(Relaxed),
        MOST_CALLS.load(Relaxed),
    );

    let books = books(&pool).await?;
    let total: i64 = books.iter().map(|&(_, balance, _)| balance).sum();
    let wrong: Vec<_> = books.iter().filter(|(_, b, e)| b != e).collect();
    let moved: i64 = sqlx::query_scalar("SELECT count(*) FROM transfers")
        .fetch_one(&pool)
        .await?;
    println!(
        "books: total {total} (opened with {}), {moved} transfers in the ledger, {} of \
         {ACCOUNTS} balances match it",
        OPENING * i64::from(ACCOUNTS),
        books.len() - wrong.len(),
    );
    if total != OPENING * i64::from(ACCOUNTS)
        || !wrong.is_empty()
        || moved as usize != count(Outcome::Moved)
    {
        eprintln!("the books do not balance: {wrong:?}");
        return Ok(ExitCode::FAILURE);
    }
    println!("the books balance");
    Ok(ExitCode::SUCCESS)
}
