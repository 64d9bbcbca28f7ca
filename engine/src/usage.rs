//! What the models cost, per day and per principal, as the store counts it
//! ([`crate::Memledger::record_usage`]): today's and this month's tokens for `memledger usage`,
//! `status` and the budgets that `import sessions`, its hook and `conflicts auto` keep.

use std::collections::BTreeMap;

use memledger_ledger::store::Store;
use memledger_ledger::tables::UsageTable;
use memledger_schemas::Timestamp;
use serde::Serialize;

use crate::error::EngineError;
use crate::models::TokenUsage;

/// The UTC day of `at`, `YYYY-MM-DD`: what usage is counted by.
pub fn day(at: Timestamp) -> String {
    at.to_rfc3339().get(..10).unwrap_or_default().to_string()
}

/// One principal's usage today and this month.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct PrincipalUsage {
    pub principal: String,
    pub today: TokenUsage,
    pub month: TokenUsage,
}

/// The store's usage on a day and in its month.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct UsageReport {
    pub day: String,
    pub month: String,
    pub today: TokenUsage,
    pub this_month: TokenUsage,
    pub by_principal: Vec<PrincipalUsage>,
}

impl UsageReport {
    /// `principal`'s usage today (zeros when it has none).
    pub fn today_of(&self, principal: &str) -> TokenUsage {
        self.by_principal.iter().find(|p| p.principal == principal).map(|p| p.today).unwrap_or_default()
    }

    /// The report of `principal` alone.
    pub fn only(mut self, principal: &str) -> UsageReport {
        self.by_principal.retain(|p| p.principal == principal);
        self.today = self.by_principal.first().map(|p| p.today).unwrap_or_default();
        self.this_month = self.by_principal.first().map(|p| p.month).unwrap_or_default();
        self
    }
}

pub(crate) fn report(store: &Store, at: Timestamp) -> Result<UsageReport, EngineError> {
    let today = day(at);
    let month = today.get(..7).unwrap_or_default().to_string();
    let mut by: BTreeMap<String, PrincipalUsage> = BTreeMap::new();
    let mut report = UsageReport { day: today.clone(), month: month.clone(), ..UsageReport::default() };
    for (d, principal, [p, c, n]) in UsageTable::scan(store, &month)? {
        let used = TokenUsage { prompt_tokens: p, completion_tokens: c, calls: n };
        let entry = by.entry(principal.clone()).or_insert_with(|| PrincipalUsage { principal, ..Default::default() });
        entry.month.add(used);
        report.this_month.add(used);
        if d == today {
            entry.today.add(used);
            report.today.add(used);
        }
    }
    report.by_principal = by.into_values().collect();
    Ok(report)
}
