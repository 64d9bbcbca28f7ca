//! What the chat model was asked to read and write: each call's `usage` (prompt and completion
//! tokens) as the API reports it, added up where the call was made. [`metered`] gives a command
//! the usage of the calls it made on its own thread (a store's server runs many commands at once,
//! each on a thread of its own), which the store then counts per day and per principal
//! ([`crate::Memledger::record_usage`]); a call whose answer carries no `usage` counts as a call
//! with no tokens.

use std::cell::RefCell;

use serde::{Deserialize, Serialize};

/// Tokens and calls, as the API counts them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TokenUsage {
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
    /// Model calls answered (with or without a `usage`).
    #[serde(default)]
    pub calls: u64,
}

impl TokenUsage {
    pub fn total(&self) -> u64 {
        self.prompt_tokens.saturating_add(self.completion_tokens)
    }

    /// Add `other` (counts stop at the largest number rather than wrap: a client may send any).
    pub fn add(&mut self, other: TokenUsage) {
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.completion_tokens = self.completion_tokens.saturating_add(other.completion_tokens);
        self.calls = self.calls.saturating_add(other.calls);
    }

    pub fn is_empty(&self) -> bool {
        *self == TokenUsage::default()
    }
}

/// What a prompt is assumed to cost before it is sent: its length at 4 bytes a token, and an
/// answer of `answer` tokens (at least 512).
pub fn estimate(system: &str, user: &str, answer: u64) -> u64 {
    ((system.len() + user.len()) as u64).div_ceil(4) + answer.max(512)
}

/// How many of `prompts`, in order, fit in `budget` tokens by [`estimate`] (all without one).
pub fn fitting(prompts: &[(String, String)], budget: Option<u64>) -> usize {
    let Some(budget) = budget else { return prompts.len() };
    let mut spent = 0u64;
    prompts
        .iter()
        .take_while(|(system, user)| {
            spent += estimate(system, user, 0);
            spent <= budget
        })
        .count()
}

thread_local! {
    static METERED: RefCell<Option<TokenUsage>> = const { RefCell::new(None) };
}

/// Run `f`, and the usage of the model calls it made on this thread.
pub fn metered<T>(f: impl FnOnce() -> T) -> (T, TokenUsage) {
    let outer = METERED.with(|m| m.borrow_mut().replace(TokenUsage::default()));
    let result = f();
    let used = METERED.with(|m| std::mem::replace(&mut *m.borrow_mut(), outer)).unwrap_or_default();
    // A metered call inside another still counts for the outer one.
    METERED.with(|m| {
        if let Some(outer) = m.borrow_mut().as_mut() {
            outer.add(used);
        }
    });
    (result, used)
}

/// Count `used` for the command metering this thread, if any.
pub(crate) fn count(used: TokenUsage) {
    METERED.with(|m| {
        if let Some(total) = m.borrow_mut().as_mut() {
            total.add(used);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_metered_command_counts_only_its_own_thread_s_calls() {
        let (_, used) = metered(|| {
            count(TokenUsage { prompt_tokens: 10, completion_tokens: 2, calls: 1 });
            std::thread::spawn(|| count(TokenUsage { prompt_tokens: 1000, completion_tokens: 0, calls: 1 }))
                .join()
                .unwrap();
            let (_, inner) = metered(|| count(TokenUsage { prompt_tokens: 5, completion_tokens: 1, calls: 1 }));
            assert_eq!(inner.total(), 6);
        });
        assert_eq!(used, TokenUsage { prompt_tokens: 15, completion_tokens: 3, calls: 2 });
        count(TokenUsage { prompt_tokens: 1, completion_tokens: 1, calls: 1 });
    }
}
