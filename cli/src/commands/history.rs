//! `memledger history`: every version of a belief, newest first.

use memledger_engine::reads::HistoryView;
use memledger_server::api::{Call, ShowQuery};

use super::Render;
use crate::app::Context;
use crate::output::{CliError, Output, clip};
use crate::style;
use memledger_engine::validity::ReadStatus;

/// Show the versions of a belief, newest first, as a timeline: each version's validity
/// interval (from its effective time, else when asserted, to the next version's) and its status
/// at the time asked about (`*` active, `>` scheduled); any version's id works.
///
/// Example: memledger history 43c1a0 --valid-at 2026-07-01T00:00:00Z
#[derive(clap::Args, Debug)]
pub struct Args {
    pub id: String,
    /// Answer as the store stood then: a ledger seq or an RFC 3339 time.
    #[arg(long, value_name = "SEQ|RFC3339")]
    pub as_of: Option<String>,
    /// Statuses at this time (what was, or will be, true then); default: the --as-of time,
    /// else now.
    #[arg(long, value_name = "RFC3339")]
    pub valid_at: Option<String>,
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    let q = ShowQuery { id: args.id, as_of: args.as_of, valid_at: args.valid_at };
    memledger_commands::memories::check_show(&q)?;
    ctx.run(Call::History(q), out)
}

/// A lineage's versions for people.
impl Render for HistoryView {
    fn render(&self, out: &mut Output, _: &str) -> Result<(), CliError> {
        // `* v3  2026-07-10T09:12:00Z → open  asserted 2026-07-10T09:12:00Z  the staging db runs
        // on Postgres 17`: `*` marks the version true at the time asked about, `>` one scheduled
        // after it; a retired one says so.
        let width = self.versions.iter().map(|v| format!("v{}", v.version).len()).max().unwrap_or(2);
        let intervals: Vec<String> =
            self.versions.iter().map(|v| super::show::interval(v.valid_from, v.valid_to)).collect();
        let iwidth = intervals.iter().map(|i| i.chars().count()).max().unwrap_or(0);
        for (v, interval) in self.versions.iter().zip(&intervals) {
            let version = format!("v{}", v.version);
            let shown = v.erased.as_ref().map_or_else(|| clip(&v.text, 100), |mark| mark.describe());
            let (mark, version, text) = match v.status {
                ReadStatus::Active => (style::green("*"), style::bold(&version), shown),
                ReadStatus::Scheduled => (style::yellow(">"), version.clone(), shown),
                _ => (" ".to_string(), version.clone(), style::dim(&shown)),
            };
            let note = match v.status {
                ReadStatus::Retired => format!("  {}", style::red("(retired)")),
                ReadStatus::Scheduled => format!("  {}", style::yellow("(scheduled)")),
                ReadStatus::Expired => {
                    format!("  (expired {})", v.expires_at.map(|t| t.to_human()).unwrap_or_default())
                }
                _ => match v.expires_at {
                    Some(t) if v.status == ReadStatus::Active => format!("  (expires {})", t.to_human()),
                    _ => String::new(),
                },
            };
            out.line(format!(
                "{mark} {}  {}  {}  {text}{note}",
                style::pad(&version, format!("v{}", v.version).len(), width),
                style::pad(interval, interval.chars().count(), iwidth),
                style::dim(&format!("asserted {} by {} ({})", v.asserted_at.to_human(), v.principal, v.authority)),
            ))?;
        }
        Ok(())
    }
}
