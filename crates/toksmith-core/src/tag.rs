//! Process-wide unique tags: the owner marks of the per-thread caches (an encoder's piece cache,
//! a model's word cache) and a vocabulary's identity. One counter serves them all, so no two
//! objects of any kind ever share a tag.

use std::sync::atomic::{AtomicU64, Ordering};

static NEXT: AtomicU64 = AtomicU64::new(1);

/// A tag no other call in this process returns (never 0).
pub fn next() -> u64 {
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    #[test]
    fn tags_are_distinct_and_nonzero() {
        let a = super::next();
        let b = super::next();
        assert!(a != 0 && b != 0 && a != b);
    }
}
