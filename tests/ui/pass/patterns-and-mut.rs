use retry_jitter::retry;

#[derive(Clone)]
struct Point {
    x: i32,
    y: i32,
}

static mut CALLS: u32 = 0;

#[retry(base = "0ns")]
fn sum((a, b): (i32, i32), Point { x, y }: Point, mut acc: Vec<i32>) -> Result<i32, usize> {
    acc.extend([a, b, x, y]);
    // Each attempt starts from the caller's `acc`, not the previous attempt's.
    if acc.len() != 4 {
        return Err(acc.len());
    }
    let calls = unsafe {
        CALLS += 1;
        CALLS
    };
    if calls < 3 {
        return Err(acc.len());
    }
    Ok(acc.iter().sum())
}

#[retry(base = "0ns")]
fn first(&(a, _): &(u8, u8), _: u8) -> Result<u8, ()> {
    Ok(a)
}

fn main() {
    assert_eq!(sum((1, 2), Point { x: 3, y: 4 }, Vec::new()), Ok(10));
    assert_eq!(first(&(9, 0), 1), Ok(9));
}
