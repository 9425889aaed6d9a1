use retry_jitter::retry;

struct Conn {
    rows: Vec<u32>,
}

impl Conn {
    // Issue 17, class 7 (sqlx's shape): `'c: 'e`, so what lives for `'e` may hold the
    // `&'c mut self` itself, as this `Drain` does.
    #[retry]
    async fn run<'e, 'c: 'e>(&'c mut self) -> Result<impl Iterator<Item = u32> + 'e, String> {
        Ok(self.rows.drain(..))
    }
}

fn main() {
    let mut conn = Conn { rows: vec![1] };
    let _ = conn.run();
}
