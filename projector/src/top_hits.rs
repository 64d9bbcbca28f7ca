//! The best hits of a text search — best score first, then newest, then the smaller id — found by
//! a collector that breaks ties on keys decoded once per segment, keeps hits at a constant cost
//! each, and hands tantivy the score below which it may skip documents
//! ([`Weight::for_each_pruning`]). A query matching most of the index costs its scoring, not
//! fast-field reads and a heap operation per match.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use memledger_schemas::MemoryId;
use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::{Cardinality, Column, ColumnValues};
use tantivy::index::SegmentId;
use tantivy::query::Weight;
use tantivy::{DocId, Score, Searcher, SegmentOrdinal, SegmentReader};

/// One hit and its rank: the greater ranks first.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ranked {
    pub(crate) score: Score,
    /// Microseconds, as the `asserted_at` fast field holds it.
    pub(crate) asserted_at: i64,
    pub(crate) memory_id: MemoryId,
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> Ordering {
        self.score
            .total_cmp(&other.score)
            .then(self.asserted_at.cmp(&other.asserted_at))
            .then(other.memory_id.cmp(&self.memory_id))
    }
}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Ranked {}

/// Each searched segment's tie-breakers — `asserted_at` and the memory id of every document —
/// decoded once, since a query whose matches mostly score the same reads them for nearly every
/// match. 24 bytes a document; segments merged away are dropped by [`SegmentKeys::retain`].
#[derive(Default)]
pub(crate) struct SegmentKeys {
    by_segment: Mutex<HashMap<SegmentId, Arc<Keys>>>,
}

/// One segment's tie-breakers, by document.
struct Keys {
    asserted_at: Vec<i64>,
    memory_id: Vec<u128>,
}

impl SegmentKeys {
    fn of(&self, segment: &SegmentReader) -> tantivy::Result<Arc<Keys>> {
        let id = segment.segment_id();
        if let Some(keys) = self.by_segment.lock().unwrap_or_else(|p| p.into_inner()).get(&id) {
            return Ok(keys.clone());
        }
        let ff = segment.fast_fields();
        let docs = segment.max_doc() as usize;
        let decode = |values: Arc<dyn ColumnValues<u64>>| {
            let mut out = vec![0; docs];
            values.get_range(0, &mut out);
            out
        };
        let mut asserted_at = vec![0; docs];
        values(ff.i64("asserted_at")?).get_range(0, &mut asserted_at);
        let (hi, lo) = (decode(values(ff.u64("id_hi")?)), decode(values(ff.u64("id_lo")?)));
        let memory_id = hi.iter().zip(&lo).map(|(h, l)| (u128::from(*h) << 64) | u128::from(*l)).collect();
        let keys = Arc::new(Keys { asserted_at, memory_id });
        self.by_segment.lock().unwrap_or_else(|p| p.into_inner()).insert(id, keys.clone());
        Ok(keys)
    }

    /// Forget the segments a searcher no longer has.
    pub(crate) fn retain(&self, searcher: &Searcher) {
        let live: HashSet<SegmentId> = searcher.segment_readers().iter().map(SegmentReader::segment_id).collect();
        self.by_segment.lock().unwrap_or_else(|p| p.into_inner()).retain(|id, _| live.contains(id));
    }
}

/// A column's values by document: read directly when every document has one (as every memory
/// has these fields), through the column's index otherwise.
fn values<T: PartialOrd + Copy + std::fmt::Debug + Send + Sync + Default + 'static>(
    column: Column<T>,
) -> Arc<dyn ColumnValues<T>> {
    if column.get_cardinality() == Cardinality::Full {
        column.values
    } else {
        column.first_or_default_col(T::default())
    }
}

/// The `limit` best hits of a search (at least one), best first.
pub(crate) struct TopHits<'a> {
    limit: usize,
    keys: &'a SegmentKeys,
}

impl TopHits<'_> {
    pub(crate) fn with_limit(limit: usize, keys: &SegmentKeys) -> TopHits<'_> {
        TopHits { limit: limit.max(1), keys }
    }
}

impl Collector for TopHits<'_> {
    type Fruit = Vec<Ranked>;
    type Child = SegmentTopHits;

    fn for_segment(&self, _: SegmentOrdinal, segment: &SegmentReader) -> tantivy::Result<SegmentTopHits> {
        Ok(SegmentTopHits { limit: self.limit, kept: Vec::new(), worst: None, keys: self.keys.of(segment)? })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    fn merge_fruits(&self, segments: Vec<Vec<Ranked>>) -> tantivy::Result<Vec<Ranked>> {
        let mut all: Vec<Ranked> = segments.into_iter().flatten().collect();
        all.sort_unstable_by(|a, b| b.cmp(a));
        all.truncate(self.limit);
        Ok(all)
    }

    fn collect_segment(
        &self,
        weight: &dyn Weight,
        ord: SegmentOrdinal,
        segment: &SegmentReader,
    ) -> tantivy::Result<Vec<Ranked>> {
        let mut top = self.for_segment(ord, segment)?;
        let alive = segment.alive_bitset();
        weight.for_each_pruning(Score::MIN, segment, &mut |doc, score| {
            if alive.is_none_or(|a| a.is_alive(doc)) {
                top.collect(doc, score);
            }
            top.threshold()
        })?;
        Ok(top.harvest())
    }
}

/// Hits gathered beyond `limit` before a cut, at least: a cut costs the length of `kept`.
const CUT_SLACK: usize = 256;

/// [`TopHits`] within one segment. Hits that beat the worst of the best `limit` so far gather in
/// `kept` until it holds `limit` (or [`CUT_SLACK`]) more; then the best `limit` are kept and the
/// worst of them is the new bar — a constant cost per hit, even when most matches score the same
/// and each newer one wins on its time.
pub(crate) struct SegmentTopHits {
    limit: usize,
    kept: Vec<Ranked>,
    /// The worst of the best `limit` at the last cut: a hit must beat it.
    worst: Option<Ranked>,
    keys: Arc<Keys>,
}

impl SegmentTopHits {
    /// The score a document must pass to be offered: just below the bar's, since an equal score
    /// may still win on its tie-breakers.
    fn threshold(&self) -> Score {
        self.worst.map_or(Score::MIN, |w| w.score.next_down())
    }

    /// Keep the best `limit` of `kept`, the worst of them as the bar.
    fn cut(&mut self) {
        if self.kept.len() > self.limit {
            self.kept.select_nth_unstable_by(self.limit - 1, |a, b| b.cmp(a));
            self.kept.truncate(self.limit);
            self.worst = Some(self.kept[self.limit - 1]);
        }
    }
}

impl SegmentCollector for SegmentTopHits {
    type Fruit = Vec<Ranked>;

    fn collect(&mut self, doc: DocId, score: Score) {
        let d = doc as usize;
        let hit = Ranked { score, asserted_at: self.keys.asserted_at[d], memory_id: MemoryId(self.keys.memory_id[d]) };
        if self.worst.is_some_and(|w| hit <= w) {
            return;
        }
        self.kept.push(hit);
        if self.kept.len() >= self.limit + self.limit.max(CUT_SLACK) {
            self.cut();
        }
    }

    fn harvest(mut self) -> Vec<Ranked> {
        self.cut();
        self.kept.sort_unstable_by(|a, b| b.cmp(a));
        self.kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use tantivy::collector::TopDocs;
    use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
    use tantivy::schema::{FAST, IndexRecordOption, Schema, TEXT};
    use tantivy::{Index, TantivyDocument, Term};

    fn hit(score: Score, at: i64, id: u128) -> Ranked {
        Ranked { score, asserted_at: at, memory_id: MemoryId(id) }
    }

    #[test]
    fn ranks_by_score_then_newest_then_smaller_id() {
        let mut hits = vec![hit(1.0, 5, 1), hit(2.0, 1, 9), hit(1.0, 7, 3), hit(1.0, 7, 2)];
        hits.sort_unstable_by(|a, b| b.cmp(a));
        let order: Vec<u128> = hits.iter().map(|h| h.memory_id.0).collect();
        assert_eq!(order, [9, 2, 3, 1]);
    }

    /// Against a collector that reads every match's tie-breakers (tantivy's `tweak_score`), on
    /// an index of few words — many equal scores, several segments, deleted documents.
    #[test]
    fn equals_a_collector_that_reads_every_match() {
        let seed: u64 = rand::random();
        eprintln!("seed {seed}");
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let mut b = Schema::builder();
        let text = b.add_text_field("text", TEXT);
        let at = b.add_i64_field("asserted_at", FAST);
        let hi = b.add_u64_field("id_hi", FAST);
        let lo = b.add_u64_field("id_lo", FAST);
        let key = b.add_u64_field("key", tantivy::schema::INDEXED);
        let index = Index::create_in_ram(b.build());
        let mut writer = index.writer_with_num_threads(1, 15_000_000).unwrap();
        const WORDS: [&str; 6] = ["deploy", "billing", "tuesday", "staging", "build", "owner"];
        for segment in 0..4u64 {
            for n in 0..1500u64 {
                let words: Vec<&str> = (0..rng.random_range(1..4)).map(|_| WORDS[rng.random_range(0..6)]).collect();
                let mut doc = TantivyDocument::default();
                doc.add_text(text, words.join(" "));
                doc.add_i64(at, rng.random_range(0..20));
                doc.add_u64(hi, rng.random_range(0..3));
                doc.add_u64(lo, rng.random());
                doc.add_u64(key, segment * 10_000 + n);
                writer.add_document(doc).unwrap();
            }
            writer.commit().unwrap();
        }
        for n in (0..40_000u64).step_by(7) {
            writer.delete_term(Term::from_field_u64(key, n));
        }
        writer.commit().unwrap();
        let searcher = index.reader().unwrap().searcher();
        let keys = SegmentKeys::default();
        for _ in 0..50 {
            let terms: Vec<(Occur, Box<dyn Query>)> = (0..rng.random_range(1..4))
                .map(|_| {
                    let t = Term::from_field_text(text, WORDS[rng.random_range(0..6)]);
                    (Occur::Should, Box::new(TermQuery::new(t, IndexRecordOption::WithFreqs)) as Box<dyn Query>)
                })
                .collect();
            let query = BooleanQuery::new(vec![(Occur::Must, Box::new(BooleanQuery::new(terms)) as Box<dyn Query>)]);
            let limit = rng.random_range(1..60);
            let got: Vec<(Score, i64, u128)> = searcher
                .search(&query, &TopHits::with_limit(limit, &keys))
                .unwrap()
                .into_iter()
                .map(|h| (h.score, h.asserted_at, h.memory_id.0))
                .collect();
            let reference = TopDocs::with_limit(limit).tweak_score(move |segment: &SegmentReader| {
                let ff = segment.fast_fields();
                let (at, hi, lo) = (
                    ff.i64("asserted_at").unwrap().first_or_default_col(0),
                    ff.u64("id_hi").unwrap().first_or_default_col(0),
                    ff.u64("id_lo").unwrap().first_or_default_col(0),
                );
                move |doc: DocId, score: Score| (score, at.get_val(doc), !hi.get_val(doc), !lo.get_val(doc))
            });
            let want: Vec<(Score, i64, u128)> = searcher
                .search(&query, &reference)
                .unwrap()
                .into_iter()
                .map(|((s, a, h, l), _)| (s, a, (u128::from(!h) << 64) | u128::from(!l)))
                .collect();
            assert_eq!(got, want, "limit {limit}");
        }
    }
}
