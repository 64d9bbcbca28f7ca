//! Chunks: the turns one model call reads, within a context budget, with the last turns before
//! them as context (the overlap), and a hash that names what they say.
//!
//! A chunk's hash is the extraction's identity: the saves of a chunk carry idempotency keys made
//! from it, so a chunk read again (a killed import run again, a file rewritten under its name)
//! saves nothing twice. It covers the transcript's identity (agent and session, else file) and
//! each turn's role, time and cleaned text, not the lines or bytes where they sit. Chunks are cut
//! greedily from the first turn not yet imported; a run of turns whose hash an earlier import
//! committed ends a chunk where it ended then, so a rewritten file that starts as it did meets
//! the same chunks again, however the rest of it grew.

use std::collections::HashSet;

use memledger_schemas::Hash;

use super::Turn;

/// The hash's domain (blake3 `derive_key`).
const CHUNK_CONTEXT: &str = "memledger 2026-12-02 transcript chunk v1";

/// What a turn costs of the budget besides its text: its line numbers, role and time in the prompt.
const TURN_OVERHEAD: usize = 48;

/// How to cut.
#[derive(Clone, Copy, Debug)]
pub struct Budget {
    /// Characters of turns a chunk holds at most (a longer turn is a chunk alone, clipped in
    /// the prompt).
    pub chars: usize,
    /// Turns before a chunk shown with it as context.
    pub overlap: usize,
}

impl Default for Budget {
    /// About 6,000 tokens of transcript a call, which leaves room in an 8k context for the
    /// instructions and the answer; two turns of context.
    fn default() -> Self {
        Budget { chars: 24_000, overlap: 2 }
    }
}

/// A chunk of a transcript's turns: `turns[first..end]`, with `turns[context..first]` before it.
#[derive(Clone, Debug, PartialEq)]
pub struct Chunk {
    pub context: usize,
    pub first: usize,
    pub end: usize,
    pub hash: Hash,
    /// An earlier import committed this chunk: nothing to ask.
    pub known: bool,
}

impl Chunk {
    pub fn turns<'a>(&self, turns: &'a [Turn]) -> &'a [Turn] {
        &turns[self.first..self.end]
    }

    pub fn context_turns<'a>(&self, turns: &'a [Turn]) -> &'a [Turn] {
        &turns[self.context..self.first]
    }

    /// The chunk's lines, from 1, inclusive.
    pub fn lines(&self, turns: &[Turn]) -> (u32, u32) {
        (turns[self.first].line, turns[self.end - 1].last_line)
    }

    /// The byte after its last turn.
    pub fn end_offset(&self, turns: &[Turn]) -> u64 {
        turns[self.end - 1].end
    }
}

/// What makes two transcripts one: the agent and its session, else the file.
pub fn identity(turn: &Turn) -> String {
    memledger_projector::transcripts::identity(turn.agent.as_str(), turn.session.as_deref(), &turn.file)
}

fn put(h: &mut blake3::Hasher, bytes: &[u8]) {
    h.update(&(bytes.len() as u64).to_be_bytes());
    h.update(bytes);
}

fn add_turn(h: &mut blake3::Hasher, turn: &Turn) {
    put(h, turn.role.as_bytes());
    h.update(&turn.timestamp.map_or(i64::MIN, |t| t.micros()).to_be_bytes());
    put(h, turn.text.as_bytes());
}

/// Cut `turns[start..]` (cleaned) into chunks within `budget`; `known` holds the hashes of the
/// chunks earlier imports committed for this transcript.
pub fn chunks(turns: &[Turn], start: usize, budget: Budget, known: &HashSet<Hash>) -> Vec<Chunk> {
    let Some(first) = turns.first() else { return Vec::new() };
    let mut base = blake3::Hasher::new_derive_key(CHUNK_CONTEXT);
    put(&mut base, identity(first).as_bytes());
    let mut out = Vec::new();
    let mut i = start;
    while i < turns.len() {
        let mut h = base.clone();
        let (mut size, mut j, mut known_here) = (0usize, i, false);
        while j < turns.len() {
            let cost = turns[j].text.len() + TURN_OVERHEAD;
            if j > i && size + cost > budget.chars {
                break;
            }
            add_turn(&mut h, &turns[j]);
            size += cost;
            j += 1;
            if !known.is_empty() && known.contains(&Hash(*h.finalize().as_bytes())) {
                known_here = true;
                break;
            }
        }
        out.push(Chunk {
            context: i.saturating_sub(budget.overlap),
            first: i,
            end: j,
            hash: Hash(*h.finalize().as_bytes()),
            known: known_here,
        });
        i = j;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcripts::Agent;

    fn turn(i: u32, text: &str) -> Turn {
        Turn {
            agent: Agent::Plain,
            session: Some("s".into()),
            file: "f".into(),
            line: i,
            last_line: i,
            end: u64::from(i) * 10,
            message_id: None,
            role: if i % 2 == 1 { "user".into() } else { "assistant".into() },
            timestamp: None,
            text: text.into(),
        }
    }

    #[test]
    fn chunks_fit_the_budget_and_overlap() {
        let turns: Vec<Turn> = (1..=10).map(|i| turn(i, &"x".repeat(52))).collect();
        let budget = Budget { chars: 300, overlap: 1 };
        let cut = chunks(&turns, 0, budget, &HashSet::new());
        assert_eq!(
            cut.iter().map(|c| (c.context, c.first, c.end)).collect::<Vec<_>>(),
            vec![(0, 0, 3), (2, 3, 6), (5, 6, 9), (8, 9, 10)]
        );
        assert_eq!(cut[1].lines(&turns), (4, 6));
        // From a later start, the same cut of what follows.
        let later = chunks(&turns, 3, budget, &HashSet::new());
        assert_eq!(later, cut[1..].to_vec());
        // A turn longer than the budget is a chunk alone.
        let long = vec![turn(1, &"y".repeat(1000)), turn(2, "short")];
        assert_eq!(chunks(&long, 0, budget, &HashSet::new()).len(), 2);
    }

    #[test]
    fn a_known_chunk_ends_where_it_ended_before() {
        let turns: Vec<Turn> = (1..=10).map(|i| turn(i, &format!("{i:02}{}", "x".repeat(50)))).collect();
        let budget = Budget { chars: 300, overlap: 1 };
        // An earlier import read the first 4 turns only (the file ended there).
        let before = chunks(&turns[..4], 0, budget, &HashSet::new());
        let known: HashSet<Hash> = before.iter().map(|c| c.hash).collect();
        let again = chunks(&turns, 0, budget, &known);
        assert_eq!((again[0].end, again[0].known), (3, true));
        assert_eq!((again[1].first, again[1].end, again[1].known), (3, 4, true));
        assert!(!again[2].known);
        // Another text is another chunk.
        let mut edited = turns.clone();
        edited[0].text = "changed".into();
        assert!(!chunks(&edited, 0, budget, &known)[0].known);
    }
}
