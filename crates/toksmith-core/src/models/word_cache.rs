//! A per-thread cache of the ids of whole words for the pipeline models (character BPE,
//! Unigram of `tokenizers`, WordPiece), so each distinct word is segmented once. It is the byte-
//! level engine's [`PieceCache`] (short keys inline, a hit-rate window that turns the cache off
//! on text whose words never repeat) in a thread-local of its own, tagged with the model that
//! filled it. Only exact: a model caches a word only where its ids depend on nothing but the
//! word.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::encode::piece_cache::{PieceCache, MAX_PIECE};
use crate::mem::try_reserve;
use crate::Result;

static NEXT_OWNER: AtomicU64 = AtomicU64::new(1);

/// A tag for a new model's cache entries.
pub fn new_owner() -> u64 {
    NEXT_OWNER.fetch_add(1, Ordering::Relaxed)
}

thread_local! {
    static CACHE: RefCell<PieceCache> = RefCell::new(PieceCache::default());
}

/// Append the ids of `word` to `out`: the cached ones, or those `segment` appends (then
/// remembered when the word is at most [`MAX_PIECE`] bytes).
#[inline]
pub fn cached(
    owner: u64,
    word: &str,
    out: &mut Vec<u32>,
    segment: impl FnOnce(&mut Vec<u32>) -> Result<()>,
) -> Result<()> {
    if word.is_empty() || word.len() > MAX_PIECE {
        return segment(out);
    }
    CACHE.with(|cell| {
        let Ok(mut cache) = cell.try_borrow_mut() else {
            return segment(out);
        };
        if cache.owner != owner {
            cache.clear();
            cache.owner = owner;
        }
        if !cache.in_use() {
            return segment(out);
        }
        if let Some(ids) = cache.get(word.as_bytes()) {
            try_reserve(out, ids.len(), "the ids")?;
            out.extend_from_slice(ids);
            return Ok(());
        }
        let mark = out.len();
        segment(out)?;
        if out.len() - mark <= MAX_PIECE {
            cache.insert(word.as_bytes(), &out[mark..]);
        }
        Ok(())
    })
}

/// Run `f` with this thread's cache (emptied first when another model filled it), for models
/// that keep more than ids in an entry or look words up in a loop of their own; `None` when
/// the cache is borrowed already on this thread.
pub fn with<R>(owner: u64, f: impl FnOnce(Option<&mut PieceCache>) -> R) -> R {
    CACHE.with(|cell| match cell.try_borrow_mut() {
        Ok(mut cache) => {
            if cache.owner != owner {
                cache.clear();
                cache.owner = owner;
            }
            f(Some(&mut cache))
        }
        Err(_) => f(None),
    })
}
