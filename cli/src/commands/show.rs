//! `memledger show`: one memory.

use memledger_engine::reads::MemoryView;

use memledger_engine::Memledger;
use memledger_server::api::{Call, ShowQuery};

use crate::app::Context;
use crate::output::{CliError, Output};

/// Show one memory: its text, lineage position, status and conflicts.
///
/// Example: memledger show 43c1a0
#[derive(clap::Args, Debug)]
pub struct Args {
    /// A memory id or a unique prefix of 6+ digits.
    pub id: String,
    /// Answer as the store stood then: a ledger seq or an RFC 3339 time.
    #[arg(long, value_name = "SEQ|RFC3339")]
    pub as_of: Option<String>,
}

pub fn print_memory(out: &mut Output, m: &MemoryView) -> Result<(), CliError> {
    out.line(format!("{}  v{}  {}  {}  {}", m.memory_id, m.version, m.status, m.memory_type, m.scope))?;
    match &m.erased {
        Some(mark) => out.line(format!("  {}", mark.describe()))?,
        None => out.line(format!("  {}", m.text.replace('\n', "\n  ")))?,
    }
    out.line(format!("  root {}  asserted {}  cause {}", m.root_id.short(), m.asserted_at.to_human(), m.cause))?;
    if let Some(t) = m.effective_at {
        out.line(format!("  effective {}", t.to_human()))?;
    }
    if let Some(t) = m.stale_since {
        out.line(format!("  stale since {}", t.to_human()))?;
    }
    if !m.conflicts_with.is_empty() {
        let ids: Vec<String> = m.conflicts_with.iter().map(|i| i.short()).collect();
        out.line(format!("  conflicts with {}", ids.join(", ")))?;
    }
    Ok(())
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    ctx.run(Call::Show(ShowQuery { id: args.id, as_of: args.as_of }), out)
}

pub fn execute(live: &Memledger, q: &ShowQuery, out: &mut Output) -> Result<(), CliError> {
    let point = q.as_of.as_deref().map(str::parse::<memledger_engine::AsOf>).transpose()?;
    let ml = live.as_of(point)?;
    let id = ml.resolve_memory_id(&q.id)?;
    let m = ml.show(id)?;
    if out.json {
        return out.json_line(&m);
    }
    print_memory(out, &m)
}
