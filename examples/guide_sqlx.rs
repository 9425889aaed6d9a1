use retry_jitter::retry;
use sqlx::postgres::{PgPool, PgPoolOptions};

// The unit of retry is the whole transaction: a serialization failure (40001) or a deadlock
// (40P01) undoes it all on the server, so each attempt begins again and reads again.
#[retry(attempts = 12, base = "10ms", cap = "1s", on = retry_jitter::transient)]
async fn transfer(pool: &PgPool, from: i32, to: i32, amount: i64) -> Result<bool, sqlx::Error> {
    let mut tx = pool
        .begin_with("BEGIN ISOLATION LEVEL SERIALIZABLE")
        .await?;
    let balance: i64 = sqlx::query_scalar("SELECT balance FROM accounts WHERE id = $1")
        .bind(from)
        .fetch_one(&mut *tx)
        .await?;
    if balance < amount {
        return Ok(false); // declined: `tx` is dropped, and rolled back
    }
    sqlx::query("UPDATE accounts SET balance = balance - $1 WHERE id = $2")
        .bind(amount)
        .bind(from)
        .execute(&mut *tx)
        .await?;
    sqlx::query("UPDATE accounts SET balance = balance + $1 WHERE id = $2")
        .bind(amount)
        .bind(to)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(true)
}

// A failover or a restart: the pool's connect is retried too (class 08, 57P01, 57P03…).
#[retry(attempts = 8, base = "100ms", cap = "2s", on = retry_jitter::transient)]
async fn connect(url: &str) -> Result<PgPool, sqlx::Error> {
    PgPoolOptions::new().max_connections(8).connect(url).await
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::var("DATABASE_URL")?; // postgres://user:password@host/database
    let pool = connect(&url).await?;
    sqlx::query("DROP TABLE IF EXISTS accounts")
        .execute(&pool)
        .await?;
    sqlx::query("CREATE TABLE accounts (id INT PRIMARY KEY, balance BIGINT NOT NULL)")
        .execute(&pool)
        .await?;
    sqlx::query("INSERT INTO accounts VALUES (1, 1000), (2, 1000)")
        .execute(&pool)
        .await?;

    // 20 transfers at once, both ways: they conflict, and the conflicts are retried.
    let mut tellers = tokio::task::JoinSet::new();
    for i in 0..20 {
        let pool = pool.clone();
        let (from, to) = if i % 2 == 0 { (1, 2) } else { (2, 1) };
        tellers.spawn(async move { transfer(&pool, from, to, 10).await });
    }
    let mut moved = 0;
    while let Some(done) = tellers.join_next().await {
        moved += u32::from(done??);
    }
    let total: i64 = sqlx::query_scalar("SELECT SUM(balance)::BIGINT FROM accounts")
        .fetch_one(&pool)
        .await?;
    println!("{moved} of 20 transfers moved money; the books hold {total} (opened with 2000)");
    Ok(())
}
