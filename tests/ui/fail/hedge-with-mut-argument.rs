use retry_jitter::retry;

#[retry(hedge = "50ms")]
async fn fill(buf: &mut Vec<u8>, id: u64) -> Result<u64, String> {
    buf.push(1);
    Ok(id)
}

struct Cache;

impl Cache {
    #[retry(hedge = "p95")]
    async fn refresh(&mut self) -> Result<(), String> {
        Ok(())
    }
}

fn main() {
    let _ = fill(&mut Vec::new(), 1);
    let _ = Cache.refresh();
}
