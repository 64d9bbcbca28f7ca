//! `memledger save`: one memory through the belief pipeline, or many with `--from`.

use std::io::{BufRead, BufReader, Read};

use memledger_engine::{Durability, Memledger, SaveRequest, SaveResult};
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
        memory_type: args.memory_type.or_else(crate::config::default_type),
        scope: args.scope.or_else(crate::config::default_scope),
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

/// A line's answer, held until the group it belongs to is durable.
enum Answer {
    Saved(SaveResult),
    Refused(usize, String),
}

/// Lines answered per fsync at most. Smaller groups form whenever the input pauses, so a writer
/// feeding lines one at a time gets each answer at once.
const MAX_GROUP: usize = 1024;

/// The bulk path: each line through the whole pipeline, in order, with group commit — many
/// lines' events made durable by one fsync — and each answer printed only once it is durable. A
/// bad line is answered with its error and the rest go on.
fn run_from(ctx: &Context, from: &str, out: &mut Output) -> Result<(), CliError> {
    let input: Box<dyn Read> = if from == "-" {
        Box::new(std::io::stdin())
    } else {
        Box::new(std::fs::File::open(from).map_err(|e| CliError::bad_input(format!("cannot read {from}: {e}")))?)
    };
    let mut reader = BufReader::with_capacity(1 << 16, input);
    // The store is opened (and created) at the first line that passes validation: a stream of
    // refused lines writes nothing, not even an empty store.
    let mut store: Option<Memledger> = None;
    let size = if from == "-" { None } else { std::fs::metadata(from).ok().map(|m| m.len()) };
    let bar = crate::style::progress(size, "saving");
    let mut refused = 0usize;
    let mut pending: Vec<Answer> = Vec::new();
    let mut line = Vec::new();
    let mut number = 0usize;
    loop {
        line.clear();
        let read = reader.read_until(b'\n', &mut line)?;
        if read == 0 {
            break;
        }
        bar.inc(if size.is_some() { read as u64 } else { 1 });
        number += 1;
        if !line.iter().all(|b| b.is_ascii_whitespace()) {
            let request = std::str::from_utf8(&line)
                .map_err(|_| "the line is not valid UTF-8".to_string())
                .and_then(|l| serde_json::from_str::<SaveRequest>(l).map_err(|e| format!("not a save request: {e}")));
            let saved = match request {
                Ok(req) => match &store {
                    Some(ml) => Ok(ml.save_with(req, &ctx.actor, Durability::Deferred)),
                    None => match req.clone().validate() {
                        Err(e) => Ok(Err(e)),
                        Ok(_) => {
                            let ml = store.insert(ctx.open(true)?);
                            Ok(ml.save_with(req, &ctx.actor, Durability::Deferred))
                        }
                    },
                },
                Err(message) => Err(message),
            };
            match saved {
                Ok(Ok(result)) => pending.push(Answer::Saved(result)),
                Ok(Err(e)) if e.exit_code() == 2 => pending.push(Answer::Refused(number, e.to_string())),
                Ok(Err(e)) => {
                    // A storage failure: answer what is durable, then stop.
                    flush(store.as_ref(), out, &mut pending, &mut refused)?;
                    return Err(e.into());
                }
                Err(message) => pending.push(Answer::Refused(number, message)),
            }
        }
        if pending.len() >= MAX_GROUP || reader.buffer().is_empty() {
            bar.suspend(|| flush(store.as_ref(), out, &mut pending, &mut refused))?;
        }
    }
    bar.finish_and_clear();
    flush(store.as_ref(), out, &mut pending, &mut refused)?;
    if refused > 0 {
        out.flush()?;
        return Err(CliError::new(2, format!("{refused} line(s) were refused; the rest were saved"), None));
    }
    Ok(())
}

/// Make the group durable, then answer each of its lines in order. Without a store, every pending
/// answer is a refusal and there is nothing to make durable.
fn flush(
    ml: Option<&Memledger>,
    out: &mut Output,
    pending: &mut Vec<Answer>,
    refused: &mut usize,
) -> Result<(), CliError> {
    if pending.is_empty() {
        return Ok(());
    }
    if let Some(ml) = ml {
        ml.sync()?;
    }
    for answer in pending.drain(..) {
        match answer {
            Answer::Saved(r) => print_result(out, &r)?,
            Answer::Refused(number, message) => {
                *refused += 1;
                if out.json {
                    out.json_line(&json!({"line": number, "error": message}))?;
                } else {
                    out.line(format!("line {number}: error: {message}"))?;
                }
            }
        }
    }
    out.flush()
}
