use retry_jitter::retry;

pub struct Json {
    out: Vec<u8>,
}

pub struct Compound<'a> {
    ser: &'a mut Json,
}

pub trait Serializer {
    type Seq;
    fn serialize_seq(self) -> Result<Self::Seq, String>;
}

impl<'a> Serializer for &'a mut Json {
    type Seq = Compound<'a>;

    // Issue 17, class 9: `Self` is a `&mut`, re-borrowed per attempt; what the return type
    // holds of `'a` is then a borrow of `self`, which cannot be returned.
    #[retry]
    fn serialize_seq(self) -> Result<Compound<'a>, String> {
        self.out.push(b'[');
        Ok(Compound { ser: self })
    }
}

fn main() {
    let mut json = Json { out: Vec::new() };
    let _ = (&mut json).serialize_seq().map(|c| c.ser.out.len());
}
