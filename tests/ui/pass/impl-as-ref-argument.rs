#![deny(warnings)]
// Issue 17, class 10: `impl AsRef<Path>` / `impl AsRef<str>` arguments (`tokio::fs`'s
// signatures) need not be `Clone`: all a body can do with one is borrow it, and each attempt is
// lent the argument (`&impl AsRef<Path>` is `AsRef<Path>` too), passed on or `.as_ref()`ed.
use retry_jitter::retry;
use std::cell::Cell;
use std::path::{Path, PathBuf};

thread_local! {
    static CALLS: Cell<u32> = const { Cell::new(0) };
}

fn call() -> u32 {
    CALLS.with(|c| {
        c.set(c.get() + 1);
        c.get()
    })
}

// Not `Clone`: only `AsRef<Path>`.
struct NotClone(PathBuf);

impl AsRef<Path> for NotClone {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

fn open(path: impl AsRef<Path>) -> Result<String, u32> {
    let n = call();
    if n % 3 != 0 { Err(n) } else { Ok(path.as_ref().display().to_string()) }
}

async fn read(path: impl AsRef<Path>) -> Result<String, u32> {
    tokio::task::yield_now().await;
    open(path)
}

#[retry(attempts = 3, base = "0ns")]
fn open_retried(path: impl AsRef<Path>) -> Result<String, u32> {
    open(path)
}

#[retry(attempts = 3, base = "0ns")]
async fn read_retried(path: impl AsRef<Path> + Send, label: impl AsRef<str>) -> Result<String, u32> {
    let text = read(&path).await?;
    Ok(format!("{}: {text} ({})", label.as_ref(), path.as_ref().display()))
}

fn assert_send<T: Send>(t: T) -> T {
    t
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    assert_eq!(open_retried(NotClone("/a".into())), Ok("/a".to_owned()));
    let read = assert_send(read_retried(NotClone("/b".into()), "b"));
    assert_eq!(read.await, Ok("b: /b (/b)".to_owned()));
    assert_eq!(read_retried("/c", String::from("c")).await, Ok("c: /c (/c)".to_owned()));
    assert_eq!(CALLS.with(Cell::get), 9);
}
