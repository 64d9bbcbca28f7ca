//! Shared by the crash tests: a small seeded generator for kill points, so a failing run can be
//! replayed with `MEMLEDGER_CRASH_SEED`.

/// A small deterministic generator (xorshift), so the tests need no extra crate.
pub struct Rng(u64);

impl Rng {
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// The seed from `MEMLEDGER_CRASH_SEED`, else from the clock; printed with `label`.
pub fn seeded(label: &str) -> Rng {
    let seed: u64 = std::env::var("MEMLEDGER_CRASH_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1) | 1
    });
    println!("{label}: seed {seed} (MEMLEDGER_CRASH_SEED)");
    Rng(seed)
}
