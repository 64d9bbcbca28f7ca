//! Co-enrichments (docs/adr/0020-co-enrichments.md): two memories that each add a detail of their
//! own to one earlier version of a belief — two agents read "Ana works at Acme" and one adds her
//! role, the other her city. Neither says everything the other does, so neither may replace the
//! other (the last replacement would erase the first detail); the save links them `co_enriches`,
//! and with a chat model proposes one text through the conflict queue.
//!
//! A memory *builds on* a version when it says everything the version says and more: the lexical
//! classifier calls it an enrichment (`identical`, only the incoming side adds) or a narrower
//! statement of it (`complementary` by the `narrower` gate). The incoming memory and a candidate
//! are co-enrichments of version `P` when both build on `P` and each says something the other
//! does not. `P` is found two ways, so the link does not depend on which arrived first:
//! - the candidate is an enrichment (its cause is `enriched`): `P` is a version it replaced,
//!   walking back through earlier enrichments;
//! - the incoming memory builds on another candidate: that candidate is `P`, if the candidate
//!   builds on it too.

use memledger_projector::beliefs::MemoryRecord;
use memledger_schemas::{EdgeKind, MemoryId, MemoryType, Relation};

use crate::analysis_cache::AnalysisCache;
use crate::classify::{Classification, classify_lexical_analysed, lexical};
use crate::config::EngineConfig;
use crate::error::EngineError;
use crate::reads::Reader;

/// How many earlier enrichments a candidate's lineage is walked back through to find the version
/// the incoming memory builds on.
pub const MAX_ENRICHMENT_STEPS: usize = 8;

/// A candidate that co-enriches, with the incoming memory, the version `revision`.
pub(crate) struct CoEnrichment {
    /// Its index among the candidates.
    pub(crate) candidate: usize,
    pub(crate) revision: MemoryRecord,
    /// What the incoming memory (or, found the second way, the candidate) is to the revision.
    pub(crate) builds: Classification,
}

/// Whether a classification says its incoming side builds on its candidate side.
pub(crate) fn builds_on(class: &Classification) -> bool {
    !class.near_miss
        && class.incoming_adds
        && !class.candidate_adds
        && (class.relation == Relation::Identical
            || (class.relation == Relation::Complementary && class.gate == "narrower"))
}

/// What finding co-enrichments reads.
pub(crate) struct Finder<'a> {
    pub(crate) reader: Reader<'a>,
    pub(crate) analyses: &'a AnalysisCache,
    pub(crate) config: &'a EngineConfig,
}

impl Finder<'_> {
    fn classify(&self, a: &lexical::Analysis, a_type: MemoryType, b: &MemoryRecord) -> Classification {
        let analysis = self.analyses.of(b);
        classify_lexical_analysed(a, &analysis, Some(a_type), Some(b.memory_type), self.config)
    }

    /// The candidates that co-enrich a version with the incoming memory (analysed as `incoming`,
    /// of type `memory_type`), given each candidate's classification against it.
    pub(crate) fn find(
        &self,
        incoming: &lexical::Analysis,
        memory_type: MemoryType,
        candidates: &[(&MemoryRecord, &Classification)],
    ) -> Result<Vec<CoEnrichment>, EngineError> {
        let mut found = Vec::new();
        for (i, (candidate, class)) in candidates.iter().enumerate() {
            // Each must say something the other does not, and not contradict it.
            if class.near_miss
                || class.relation == Relation::Contradictory
                || !class.incoming_adds
                || !class.candidate_adds
                || candidate.memory_type != memory_type
            {
                continue;
            }
            if let Some(link) = self.through_lineage(incoming, memory_type, i, candidate)? {
                found.push(link);
                continue;
            }
            // The incoming memory builds on another candidate, which this one builds on too.
            for (j, (revision, rclass)) in candidates.iter().enumerate() {
                if j == i || !builds_on(rclass) {
                    continue;
                }
                let analysis = self.analyses.of(candidate);
                if builds_on(&self.classify(&analysis, candidate.memory_type, revision)) {
                    found.push(CoEnrichment { candidate: i, revision: (*revision).clone(), builds: (*rclass).clone() });
                    break;
                }
            }
        }
        Ok(found)
    }

    /// The version of `candidate`'s lineage that it enriched, or one before it, on which the
    /// incoming memory builds.
    fn through_lineage(
        &self,
        incoming: &lexical::Analysis,
        memory_type: MemoryType,
        i: usize,
        candidate: &MemoryRecord,
    ) -> Result<Option<CoEnrichment>, EngineError> {
        let mut at = candidate.clone();
        for _ in 0..MAX_ENRICHMENT_STEPS {
            if at.cause != "enriched" {
                return Ok(None);
            }
            let Some(before) = self.replaced(&at)? else { return Ok(None) };
            let builds = self.classify(incoming, memory_type, &before);
            if builds_on(&builds) {
                return Ok(Some(CoEnrichment { candidate: i, revision: before, builds }));
            }
            at = before;
        }
        Ok(None)
    }

    /// The earlier version of its lineage that `r` replaced.
    fn replaced(&self, r: &MemoryRecord) -> Result<Option<MemoryRecord>, EngineError> {
        let edges = self.reader.edges();
        for e in edges.touching(r.memory_id)? {
            if e.edge.kind == EdgeKind::Replaces && e.edge.from == r.memory_id {
                let before = self.reader.record(e.edge.to)?;
                if before.root_id == r.root_id && before.version < r.version {
                    return Ok(Some(before));
                }
            }
        }
        Ok(None)
    }
}

/// The active memories joined to `id` as co-enrichments.
pub(crate) fn siblings(reader: Reader<'_>, id: MemoryId) -> Result<Vec<MemoryRecord>, EngineError> {
    let mut out = Vec::new();
    for other in reader.edges().linked(id, EdgeKind::CoEnriches)? {
        if let Some(r) = reader.beliefs().get(other)?
            && r.status == memledger_schemas::Status::Active
        {
            out.push(r);
        }
    }
    Ok(out)
}
