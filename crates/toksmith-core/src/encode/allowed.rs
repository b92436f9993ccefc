//! Which special tokens an `encode` call may produce (pinned tokens are always produced).

use crate::added::AddedKind;

/// Which special tokens an `encode` call may produce.
#[derive(Clone, Debug)]
pub enum Allowed {
    None,
    All,
    Some(Vec<u32>),
}

impl Allowed {
    #[inline]
    pub(crate) fn accepts(&self, id: u32, kind: AddedKind) -> bool {
        kind == AddedKind::Pinned
            || match self {
                Allowed::None => false,
                Allowed::All => true,
                Allowed::Some(v) => v.contains(&id),
            }
    }
}
