//! `memledger history`: every version of a belief, newest first.

use memledger_engine::Memledger;
use memledger_server::api::{Call, ShowQuery};

use crate::app::Context;
use crate::output::{CliError, Output, clip};
use crate::style;

/// Show the versions of a belief, newest first; any version's id works.
///
/// Example: memledger history 43c1a0
#[derive(clap::Args, Debug)]
pub struct Args {
    pub id: String,
    /// Answer as the store stood then: a ledger seq or an RFC 3339 time.
    #[arg(long, value_name = "SEQ|RFC3339")]
    pub as_of: Option<String>,
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    ctx.run(Call::History(ShowQuery { id: args.id, as_of: args.as_of }), out)
}

pub fn execute(live: &Memledger, q: &ShowQuery, out: &mut Output) -> Result<(), CliError> {
    let point = q.as_of.as_deref().map(str::parse::<memledger_engine::AsOf>).transpose()?;
    let ml = live.as_of(point)?;
    let id = ml.resolve_memory_id(&q.id)?;
    let h = ml.history(id)?;
    if out.json {
        return out.json_line(&h);
    }
    // `* v3  2026-07-10T09:12:00Z  the staging db runs on Postgres 17`: `*` marks the active
    // version; a retired one says so.
    let width = h.versions.iter().map(|v| format!("v{}", v.version).len()).max().unwrap_or(2);
    for v in &h.versions {
        let active = v.status == memledger_schemas::Status::Active;
        let version = format!("v{}", v.version);
        let shown = v.erased.as_ref().map_or_else(|| clip(&v.text, 100), |mark| mark.describe());
        let (mark, version, text) = if active {
            (style::green("*"), style::bold(&version), shown)
        } else {
            (" ".to_string(), version.clone(), style::dim(&shown))
        };
        let retired = if v.status == memledger_schemas::Status::Retired {
            format!("  {}", style::red("(retired)"))
        } else {
            String::new()
        };
        out.line(format!(
            "{mark} {}  {}  {text}{retired}",
            style::pad(&version, format!("v{}", v.version).len(), width),
            style::dim(&v.asserted_at.to_human()),
        ))?;
    }
    Ok(())
}
