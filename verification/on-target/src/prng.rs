//! xorshift32: a fixed seed gives the same run on every machine.

pub struct XorShift(u32);

impl XorShift {
    pub const fn new(seed: u32) -> Self {
        XorShift(if seed == 0 { 0x9E37_79B9 } else { seed })
    }

    pub fn next(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        self.0 = x;
        x
    }

    /// Uniform enough in `0..n` for a test (`n > 0`).
    pub fn below(&mut self, n: u32) -> u32 {
        self.next() % n
    }
}
