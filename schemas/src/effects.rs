//! The exact effects a conflict resolution has on the views. A resolution records them; a revert
//! records the same list and the projectors undo each one, so a revert is exact by construction.

use bincode::{Decode, Encode};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::ids::MemoryId;

/// The kinds of edge in the edge graph.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Encode, Decode, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// child → parent: the child version replaced the parent.
    Replaces,
    /// Two memories a person declared distinct: never flagged against each other again.
    Distinct,
    /// incoming → candidate: a conflict was opened between them.
    Conflicts,
    /// incoming → candidate: related, but of different declared kinds.
    NearMiss,
    /// merged text → an input it was derived from.
    DerivedFrom,
    /// incoming → candidate: both enrich the same earlier version, each with a detail of its own
    /// (format 4 on).
    CoEnriches,
}

impl EdgeKind {
    pub const ALL: &'static [EdgeKind] = &[
        EdgeKind::Replaces,
        EdgeKind::Distinct,
        EdgeKind::Conflicts,
        EdgeKind::NearMiss,
        EdgeKind::DerivedFrom,
        EdgeKind::CoEnriches,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            EdgeKind::Replaces => "replaces",
            EdgeKind::Distinct => "distinct",
            EdgeKind::Conflicts => "conflicts",
            EdgeKind::NearMiss => "near_miss",
            EdgeKind::DerivedFrom => "derived_from",
            EdgeKind::CoEnriches => "co_enriches",
        }
    }
}

/// A directed edge between two memories.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Encode, Decode, Serialize, Deserialize, JsonSchema,
)]
pub struct Edge {
    pub kind: EdgeKind,
    pub from: MemoryId,
    pub to: MemoryId,
}

/// One effect of a resolution on the views.
#[derive(Clone, Debug, PartialEq, Eq, Encode, Decode, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "effect", rename_all = "snake_case")]
pub enum Effect {
    /// An active memory went stale. Undo: active again.
    MadeStale { memory_id: MemoryId },
    /// A memory moved from one lineage position to another. Undo: moved back.
    Reparented { memory_id: MemoryId, from_root: MemoryId, from_version: u32, to_root: MemoryId, to_version: u32 },
    /// An edge was created. Undo: the edge is removed.
    EdgeAdded { edge: Edge },
    /// A memory observed by this command became an active version. Undo: it goes stale.
    Introduced { memory_id: MemoryId, root_id: MemoryId, version: u32 },
    /// A proposal was accepted: the proposed memory became active. Undo: proposed again
    /// (format 5 on).
    Accepted { memory_id: MemoryId },
    /// A proposal was rejected: the proposed memory went stale, never having been current. Undo:
    /// proposed again (format 5 on).
    Rejected { memory_id: MemoryId },
}

impl Effect {
    /// Whether format 5 introduced this effect.
    pub fn needs_format_5(&self) -> bool {
        matches!(self, Effect::Accepted { .. } | Effect::Rejected { .. })
    }
}
