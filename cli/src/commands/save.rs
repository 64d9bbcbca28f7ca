//! `memledger save`: one memory through the belief pipeline, or many with `--from`.

use std::io::{BufRead, BufReader};

use memledger_engine::{Memledger, SaveRequest, SaveResult};
use serde_json::json;

use crate::app::Context;
use crate::output::{CliError, Output};

/// Save a memory. memledger compares it with what it holds and reports `added`, `merged`,
/// `versioned`, `conflict` or `historical`.
///
/// Example: memledger save --type preference "prefers pnpm over npm"
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The memory text (`-` reads standard input). Not with --from.
    #[arg(required_unless_present = "from", conflicts_with = "from")]
    pub text: Option<String>,
    /// fact, preference, episode or procedure.
    #[arg(long = "type", value_name = "TYPE")]
    pub memory_type: Option<String>,
    /// The scope memories are compared within (default personal).
    #[arg(long)]
    pub scope: Option<String>,
    /// Where the memory came from (a session, a file, a person).
    #[arg(long)]
    pub source: Option<String>,
    /// When the claim became true in the world (RFC 3339).
    #[arg(long, value_name = "RFC3339")]
    pub effective_at: Option<String>,
    /// An identity (subject/predicate/qualifiers) that makes two texts the same fact.
    #[arg(long, value_name = "KEY")]
    pub fact_key: Option<String>,
    /// A repeated key returns the committed result and writes nothing.
    #[arg(long, value_name = "K")]
    pub idempotency_key: Option<String>,
    /// Store it as a new belief without comparing.
    #[arg(long)]
    pub no_dedup: bool,
    /// Save many: JSON Lines of {"text", "type", "scope", "source", "effective_at", "fact_key", "idempotency_key"}.
    #[arg(long, value_name = "FILE")]
    pub from: Option<String>,
}

fn print_result(out: &mut Output, r: &SaveResult) -> Result<(), CliError> {
    if out.json {
        return out.json_line(r);
    }
    let mut line = format!("{:<10} {}  v{}", r.outcome.as_str(), r.memory_id.short(), r.version);
    if let Some(c) = r.conflict_id {
        if r.settled_by_effective_time {
            line.push_str(&format!("  (conflict {} settled by effective time)", c.short()));
        } else {
            line.push_str(&format!("  conflict {} pending: see `memledger conflicts show {}`", c.short(), c.short()));
        }
    }
    if r.replayed {
        line.push_str("  (idempotency key already committed: nothing written)");
    }
    out.line(line)
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    if let Some(from) = &args.from {
        return run_from(ctx, from, out);
    }
    let text = super::text_arg(args.text.as_deref().unwrap_or_default())?;
    let request = SaveRequest {
        text,
        memory_type: args.memory_type,
        scope: args.scope,
        source: args.source,
        effective_at: args.effective_at,
        fact_key: args.fact_key,
        idempotency_key: args.idempotency_key,
        no_dedup: args.no_dedup,
    };
    // Refuse bad input before the store is created or opened.
    request.clone().validate()?;
    let ml = ctx.open(true)?;
    let result = ml.save(request, &ctx.actor)?;
    print_result(out, &result)
}

/// The bulk path: each line through the pipeline, in order; a bad line is answered and skipped.
fn run_from(ctx: &Context, from: &str, out: &mut Output) -> Result<(), CliError> {
    let reader: Box<dyn BufRead> = if from == "-" {
        Box::new(BufReader::new(std::io::stdin()))
    } else {
        Box::new(BufReader::new(
            std::fs::File::open(from).map_err(|e| CliError::bad_input(format!("cannot read {from}: {e}")))?,
        ))
    };
    let ml: Memledger = ctx.open(true)?;
    let mut refused = 0usize;
    for (i, line) in reader.split(b'\n').enumerate() {
        let number = i + 1;
        let line = line?;
        if line.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        let outcome = std::str::from_utf8(&line)
            .map_err(|_| "the line is not valid UTF-8".to_string())
            .and_then(|l| serde_json::from_str::<SaveRequest>(l).map_err(|e| format!("not a save request: {e}")))
            .and_then(|req| ml.save(req, &ctx.actor).map_err(|e| e.to_string()));
        match outcome {
            Ok(r) => print_result(out, &r)?,
            Err(message) => {
                refused += 1;
                if out.json {
                    out.json_line(&json!({"line": number, "error": message}))?;
                } else {
                    out.line(format!("line {number}: error: {message}"))?;
                }
            }
        }
    }
    if refused > 0 {
        out.flush()?;
        return Err(CliError::new(2, format!("{refused} line(s) were refused; the rest were saved"), None));
    }
    Ok(())
}
