use retry_jitter::retry;

#[retry(timeout = "2s")]
fn read_config(path: &str) -> std::io::Result<String> {
    std::fs::read_to_string(path)
}

fn main() {
    let _ = read_config("/etc/hosts");
}
