//! BPE training: parallel chunk counting, then the incremental merge loop.
//!
//! * `chunks.rs`: [`ChunkTable`], unique chunks and counts in one compact arena;
//! * `count.rs`: [`ChunkCounter`], unique chunks of a corpus with their counts;
//! * `merge.rs`: [`train_merges`] and its variants, the merge loop over those chunks;
//! * `superword.rs`: [`train_token_merges`], merges across the pieces of a trained BPE.

mod chunks;
mod count;
mod merge;
mod superword;

pub use chunks::ChunkTable;
pub(crate) use count::add_counts;
pub use count::{cut_pinned, pinned_matcher, split_for_parallel, ChunkCounter};
pub use merge::{
    train_merges, train_merges_limited, train_merges_owned, train_merges_table,
    train_symbol_merges, MergeLimits, MergeProgress, Pair,
};
pub use superword::train_token_merges;
// The safe-cut rules lived here before they moved to `added`.
pub use crate::added::{clear_of_tokens, cut_lookahead, is_safe_cut, spanning_tokens};
