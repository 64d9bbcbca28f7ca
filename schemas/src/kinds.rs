//! The small closed vocabularies recorded in events: memory types, relations, methods, outcomes,
//! resolution actions. Each has a stable snake_case name used in JSON and on the command line.
//!
//! Binary encoding uses the variant index: variants are only ever appended, never reordered.

use std::fmt;
use std::str::FromStr;

use bincode::{Decode, Encode};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

macro_rules! named_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Encode, Decode, Serialize, Deserialize, JsonSchema)]
        #[serde(rename_all = "snake_case")]
        pub enum $name { $($(#[$vdoc])* $variant),+ }

        impl $name {
            /// Every variant, in encoding order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// The stable name.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str(self.as_str()) }
        }

        impl FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s { $($text => Ok($name::$variant),)+ _ => Err(format!(
                    "unknown {} {s:?} (expected one of: {})",
                    stringify!($name).to_lowercase(),
                    [$($text),+].join(", ")
                )) }
            }
        }
    };
}

named_enum!(
    /// What a memory holds (memloom's taxonomy).
    MemoryType {
        /// A stable truth about the world or the user.
        Fact => "fact",
        /// How the user likes things done.
        Preference => "preference",
        /// A time-bound event or decision.
        Episode => "episode",
        /// Reusable how-to steps.
        Procedure => "procedure",
    }
);

named_enum!(
    /// How two memories relate.
    Relation {
        /// The same fact restated (reworded or enriched).
        Identical => "identical",
        /// Related, and both can be true.
        Complementary => "complementary",
        /// They cannot both be true.
        Contradictory => "contradictory",
        /// Nothing to do with each other.
        Unrelated => "unrelated",
    }
);

named_enum!(
    /// Which classifier produced the relation.
    Method {
        Exact => "exact",
        Lexical => "lexical",
        Embedding => "embedding",
        Llm => "llm",
        /// The principal that saved declared the relation itself (`save --replaces`,
        /// `--contradicts`; docs/design.md §15).
        Declared => "declared",
    }
);

named_enum!(
    /// What the pipeline did with a classified pair.
    PairOutcome {
        /// The incoming memory was merged into the candidate (provenance only).
        Merged => "merged",
        /// The incoming memory became the candidate's next version.
        Versioned => "versioned",
        /// The incoming memory was kept as an older version of the candidate's lineage.
        Historical => "historical",
        /// A conflict was opened between the pair and left for a person.
        ConflictOpened => "conflict_opened",
        /// A conflict was opened and settled at once by effective time.
        ConflictSettled => "conflict_settled",
        /// Related, but the declared kinds differ: recorded, not flagged.
        NearMiss => "near_miss",
        /// The pair had no effect (distinct facts, or another candidate decided).
        NoEffect => "no_effect",
        /// Each enriches the same earlier version of the candidate's lineage with a detail of
        /// its own: both kept, linked `co_enriches` (format 4 on).
        CoEnrichment => "co_enrichment",
        /// The incoming memory is a proposal (its principal may propose, not write): the pair is
        /// what accepting it would act on (format 5 on).
        Proposed => "proposed",
    }
);

named_enum!(
    /// Why a belief got a new version.
    VersionCause {
        /// The same fact in other words.
        Reworded => "reworded",
        /// The same fact with more detail.
        Enriched => "enriched",
        /// A contradiction settled by a later effective time.
        EffectiveTime => "effective_time",
        /// The same fact key with a new value.
        FactKey => "fact_key",
        /// The new memory says that the old value changed ("we moved CI to GitLab") (format 5 on).
        AnnouncedChange => "announced_change",
        /// The principal that saved it declared that it replaces the old one (`save --replaces`).
        Declared => "declared",
        /// The same text with another expiry: extended, shortened or cleared (format 6 on).
        Expiry => "expiry",
    }
);

named_enum!(
    /// Why an observation was merged instead of stored as a belief.
    MergeKind {
        /// Same content hash, same scope.
        ExactDuplicate => "exact_duplicate",
        /// The classifier called it identical and it adds nothing.
        Restatement => "restatement",
    }
);

named_enum!(
    /// How a conflict was resolved.
    ResolutionAction {
        /// The incoming memory continues the existing lineage; the existing goes stale.
        KeepNew => "keep_new",
        /// The incoming memory goes stale.
        KeepExisting => "keep_existing",
        /// Both stay active, linked `distinct`.
        KeepBoth => "keep_both",
        /// A new text becomes the next version; both inputs go stale.
        Merge => "merge",
    }
);

named_enum!(
    /// The state of a belief in the belief view.
    Status {
        Active => "active",
        Stale => "stale",
        Retired => "retired",
        /// Proposed by a principal that may propose but not write: not a current belief until
        /// someone who may write accepts it.
        Proposed => "proposed",
    }
);

named_enum!(
    /// How much a memory's word counts, by where it came from, lowest first (docs/design.md
    /// §13): a save never supersedes a belief of higher authority; it opens a conflict that only
    /// a principal with that authority can settle (format 5 on).
    Authority {
        /// An agent's summary or guess.
        Inferred => "inferred",
        /// From a file or a transcript.
        Imported => "imported",
        /// A person's own words.
        Stated => "stated",
        /// A maintained rule.
        Policy => "policy",
    }
);

named_enum!(
    /// What a grant lets a principal do in a scope (format 5 on).
    Verb {
        /// Read its memories, conflicts and events.
        Read => "read",
        /// Save proposals: not current until someone who may write accepts them.
        Propose => "propose",
        /// Save, update and forget; accept or reject proposals.
        Write => "write",
        /// Resolve and revert its conflicts (up to the authority granted).
        Resolve => "resolve",
        /// Erase its memories' texts.
        Erase => "erase",
        /// Grant and revoke in it; with `*`, manage principals and the store.
        Admin => "admin",
    }
);

named_enum!(
    /// Who a principal is (format 5 on).
    PrincipalKind {
        /// A person: saves default to `stated`.
        Person => "person",
        /// An AI agent: saves default to `inferred`.
        Agent => "agent",
        /// A program acting for a team (an importer, a bot): saves default to `imported`.
        Service => "service",
    }
);

impl PrincipalKind {
    /// The authority a save of this kind of principal claims when it names none.
    pub fn default_authority(self) -> Authority {
        match self {
            PrincipalKind::Person => Authority::Stated,
            PrincipalKind::Agent => Authority::Inferred,
            PrincipalKind::Service => Authority::Imported,
        }
    }
}

named_enum!(
    /// Why a conflict was opened (format 5 on).
    ConflictKind {
        /// The classifier (or a person) found that the memories cannot both be true.
        Contradiction => "contradiction",
        /// A save would have superseded a belief of higher authority: both kept, the higher
        /// stays current.
        Authority => "authority",
        /// A principal that may only propose saved it: not current until accepted.
        Proposal => "proposal",
    }
);

impl ConflictKind {
    pub fn is_contradiction(&self) -> bool {
        *self == ConflictKind::Contradiction
    }
}

impl Authority {
    pub fn is_stated(&self) -> bool {
        *self == Authority::Stated
    }
}

impl Default for ConflictKind {
    /// Every conflict before format 5.
    fn default() -> Self {
        ConflictKind::Contradiction
    }
}

impl Default for Authority {
    /// Every memory before format 5: a person's word.
    fn default() -> Self {
        Authority::Stated
    }
}
