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
    }
);
