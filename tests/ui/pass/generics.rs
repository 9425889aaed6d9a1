use retry_jitter::retry;
use std::fmt::Display;

#[retry(base = "0ns")]
fn render<T, U: Display>(value: &T, suffix: U) -> Result<String, std::fmt::Error>
where
    T: Display + ?Sized,
    U: Clone,
{
    Ok(format!("{value}{suffix}"))
}

#[retry(base = "0ns")]
fn total(items: impl IntoIterator<Item = u32> + Clone) -> Result<u32, ()> {
    Ok(items.into_iter().sum())
}

#[retry(base = "0ns")]
fn shown(x: &impl Display) -> Result<impl Display, ()> {
    Ok(format!("<{x}>"))
}

fn main() {
    assert_eq!(render("a", 1).unwrap(), "a1");
    assert_eq!(total(vec![1, 2, 3]), Ok(6));
    assert_eq!(shown(&5).unwrap().to_string(), "<5>");
}
