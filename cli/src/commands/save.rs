//! `memledger save`: one memory through the belief pipeline, or many with `--from`.

use std::io::{BufRead, BufReader, Read};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError};

use memledger_commands::answer::LineAnswer;
use memledger_commands::memories::{prepare_line, refuses_line};
use memledger_engine::{Caller, Durability, Memledger, PreparedSave, SaveResult};

use memledger_server::api::{self, Call};

use super::Render;
use crate::app::Context;
use crate::output::{CliError, Output};

/// Save a memory. memledger compares it with what it holds and reports `added`, `merged`,
/// `versioned`, `conflict`, `historical`, or (for a principal that may only propose) `proposed`.
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
    /// The scope memories are compared within (default: the principal's own; the owner's is
    /// personal).
    #[arg(long)]
    pub scope: Option<String>,
    /// Its authority: stated (a person's own words), policy (a maintained rule), inferred (an
    /// agent's summary or guess) or imported (from a file or a transcript). Default: the
    /// principal's (people stated, agents inferred); at most what its grant allows.
    #[arg(long, value_name = "AUTHORITY")]
    pub source: Option<String>,
    /// Where it came from, in your words (slack:#billing, a session): the same origin saying it
    /// again counts as one source.
    #[arg(long, value_name = "LABEL")]
    pub origin: Option<String>,
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
    /// Declare that this memory replaces that one (an id or a prefix; e.g. one the answer named
    /// as related): it becomes its next version, within what your authority allows.
    #[arg(long, value_name = "ID", conflicts_with_all = ["contradicts", "from", "no_dedup"])]
    pub replaces: Option<String>,
    /// Declare that this memory contradicts that one: a conflict opens for a person to settle.
    #[arg(long, value_name = "ID", conflicts_with_all = ["from", "no_dedup"])]
    pub contradicts: Option<String>,
    /// Save many: JSON Lines of {"text", "type", "scope", "source", "origin", "evidence",
    /// "effective_at", "expires_at", "ttl", "fact_key", "idempotency_key", "allow_secret"}; a
    /// refused line is reported
    /// with its number and the rest are saved.
    #[arg(long, value_name = "FILE")]
    pub from: Option<String>,
    /// Save even if the text holds what looks like a credential (an API key, a private key, a
    /// token, a password in a URL), which is refused otherwise (exit 2). With --from: every line.
    #[arg(long)]
    pub allow_secret: bool,
    /// When the claim stops being true (RFC 3339): reads at a later time find it expired, and
    /// recall and list leave it out. The same text saved with another expiry is an update.
    #[arg(long, value_name = "RFC3339", conflicts_with = "from")]
    pub expires_at: Option<String>,
    /// How long it stays true from now: 30m, 12h, 14d, 2w (a bare number is seconds).
    #[arg(long, value_name = "DURATION", conflicts_with = "from")]
    pub ttl: Option<String>,
    /// Clear the expiry of the text held (it no longer expires).
    #[arg(long, conflicts_with_all = ["from", "expires_at", "ttl"])]
    pub no_expiry: bool,
}

/// A save's human text: its outcome, and the memories it was compared with and left standing.
impl Render for SaveResult {
    fn render(&self, out: &mut Output, _: &str) -> Result<(), CliError> {
        let mut line =
            format!("{:<10} {}  v{}  {}", self.outcome.as_str(), self.memory_id.short(), self.version, self.source);
        if let Some(c) = self.conflict_id {
            if self.outcome == memledger_engine::Outcome::Proposed {
                line.push_str(&format!(
                    "  proposal {} awaits someone who may write: `memledger conflicts show {}`",
                    c.short(),
                    c.short()
                ));
            } else if self.settled_by_effective_time {
                line.push_str(&format!("  (conflict {} settled by effective time)", c.short()));
            } else {
                // Said only when it is more than this save had: what settling it then takes.
                let needs = self
                    .needs_authority
                    .filter(|&a| a > self.source)
                    .map(|a| format!(", needs {a} authority"))
                    .unwrap_or_default();
                line.push_str(&format!(
                    "  conflict {} pending{needs}: see `memledger conflicts show {}`",
                    c.short(),
                    c.short()
                ));
            }
        }
        if self.replayed {
            line.push_str("  (idempotency key already committed: nothing written)");
        }
        if self.private_spans_removed > 0 {
            line.push_str(&format!("  ({} <private> span(s) removed before saving)", self.private_spans_removed));
        }
        out.line(line)?;
        for related in &self.related {
            let cosine = related.cosine.map(|c| format!(", cosine {c:.2}")).unwrap_or_default();
            out.line(format!(
                "  related {}  {:?}  ({} by {}, score {:.2}{cosine})",
                related.memory_id.short(),
                related.text,
                related.relation,
                related.gate,
                related.score
            ))?;
        }
        Ok(())
    }
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    if let Some(from) = &args.from {
        return run_from(ctx, from, args.allow_secret, out);
    }
    let body = api::SaveBody {
        text: super::text_arg(args.text.as_deref().unwrap_or_default())?,
        memory_type: args.memory_type.or_else(crate::config::default_type),
        scope: args.scope.or_else(crate::config::default_scope),
        source: args.source,
        origin: args.origin,
        evidence: None,
        effective_at: args.effective_at,
        fact_key: args.fact_key,
        idempotency_key: args.idempotency_key,
        no_dedup: args.no_dedup,
        allow_secret: args.allow_secret,
        replaces: args.replaces,
        contradicts: args.contradicts,
        expires_at: args.expires_at,
        ttl: args.ttl,
        no_expiry: args.no_expiry,
    };
    // Through a server, the server refuses bad input (and writes nothing); here, it is refused
    // before the store is created or opened.
    if let Some(mut server) = ctx.server(true)? {
        let call = Call::Save(body);
        let reply = server.call(ctx, call.clone())?;
        return crate::backend::print_reply(&call, &reply, out, false);
    }
    body.validate()?;
    ctx.run(Call::Save(body), out)
}

/// `save --from`'s answers, each line's in order.
impl Render for Vec<LineAnswer> {
    fn render(&self, out: &mut Output, _: &str) -> Result<(), CliError> {
        self.iter().try_for_each(|line| print_line(out, line))
    }
}

/// One line's answer, as `--json` prints it or as human text.
fn print_line(out: &mut Output, line: &LineAnswer) -> Result<(), CliError> {
    match line {
        _ if out.json => out.json_line(line),
        LineAnswer::Saved(r) => r.render(out, "save"),
        LineAnswer::Refused { line, error } => out.line(format!("line {line}: error: {error}")),
    }
}

/// Lines answered per fsync at most. Smaller groups form whenever the input pauses, so a writer
/// feeding lines one at a time gets each answer at once.
const MAX_GROUP: usize = 1024;

/// The bulk path: each line through the whole pipeline, in order, with group commit — many
/// lines' events made durable by one fsync — and each answer printed only once it is durable. A
/// bad line is answered with its error and the rest go on.
fn run_from(ctx: &Context, from: &str, allow_secret: bool, out: &mut Output) -> Result<(), CliError> {
    let input: Box<dyn Read + Send> = if from == "-" {
        Box::new(std::io::stdin())
    } else {
        Box::new(std::fs::File::open(from).map_err(|e| CliError::bad_input(format!("cannot read {from}: {e}")))?)
    };
    if let Some(server) = ctx.server(true)? {
        return run_from_server(ctx, server, input, allow_secret, out);
    }
    // Reading, parsing, validating and analysing the next lines read nothing from the store, so
    // a thread of its own does them while this one saves. It is not joined: on an early return it
    // may be blocked reading a pipe, and it stops at its next line once nobody receives.
    let (send, chunks) = std::sync::mpsc::sync_channel(LOOKAHEAD_CHUNKS);
    std::thread::spawn(move || read_lines(input, send, |line| prepare_line(line, allow_secret)));
    let mut lines = Lines { chunks, chunk: Vec::new().into_iter() };
    // The store is opened (and created) at the first line that passes validation: a stream of
    // refused lines writes nothing, not even an empty store.
    let mut store: Option<(Memledger, Caller)> = None;
    let size = if from == "-" { None } else { std::fs::metadata(from).ok().map(|m| m.len()) };
    let bar = crate::style::progress(size, "saving");
    let mut refused = 0usize;
    let mut pending: Vec<LineAnswer> = Vec::new();
    loop {
        let line = match lines.next(Receiver::try_recv) {
            Ok(line) => line,
            Err(TryRecvError::Empty) => {
                // The input paused: answer what is pending before waiting for more.
                bar.suspend(|| flush(store.as_ref().map(|(ml, _)| ml), out, &mut pending, &mut refused))?;
                match lines.next(Receiver::recv) {
                    Ok(line) => line,
                    Err(_) => break,
                }
            }
            Err(TryRecvError::Disconnected) => break,
        };
        let line = line?;
        bar.inc(if size.is_some() { line.bytes } else { 1 });
        match line.save {
            None => {}
            Some(Err(error)) => pending.push(LineAnswer::Refused { line: line.number, error }),
            Some(Ok(prepared)) => {
                let (ml, caller) = match &store {
                    Some(opened) => opened,
                    None => {
                        let ml = ctx.open_direct(true)?;
                        let caller = ctx.caller(&ml)?;
                        store.insert((ml, caller))
                    }
                };
                match ml.save_prepared_by(prepared, caller, Durability::Deferred) {
                    Ok(result) => pending.push(LineAnswer::Saved(Box::new(result))),
                    Err(e) if refuses_line(&e) => {
                        pending.push(LineAnswer::Refused { line: line.number, error: e.to_string() })
                    }
                    Err(e) => {
                        // A storage failure: answer what is durable, then stop.
                        flush(store.as_ref().map(|(ml, _)| ml), out, &mut pending, &mut refused)?;
                        return Err(e.into());
                    }
                }
            }
        }
        if pending.len() >= MAX_GROUP {
            bar.suspend(|| flush(store.as_ref().map(|(ml, _)| ml), out, &mut pending, &mut refused))?;
        }
    }
    bar.finish_and_clear();
    flush(store.as_ref().map(|(ml, _)| ml), out, &mut pending, &mut refused)?;
    refused_error(refused, out)
}

fn refused_error(refused: usize, out: &mut Output) -> Result<(), CliError> {
    if refused > 0 {
        out.flush()?;
        return Err(memledger_commands::memories::refused_lines(refused).into());
    }
    Ok(())
}

/// Bytes of lines sent to a server in one call at most (the server's body limit is larger).
const MAX_BATCH_BYTES: usize = 8 << 20;

/// `save --from` through a server: the lines go in batches, each answered once durable; a batch
/// is sent when the input pauses, as the direct path answers a group.
fn run_from_server(
    ctx: &Context,
    mut server: crate::backend::Server,
    input: Box<dyn Read + Send>,
    allow_secret: bool,
    out: &mut Output,
) -> Result<(), CliError> {
    let text = |bytes: &[u8]| match std::str::from_utf8(bytes) {
        Ok(t) => (t.to_string(), false),
        Err(_) => (String::from_utf8_lossy(bytes).into_owned(), true),
    };
    let (send, chunks) = std::sync::mpsc::sync_channel(LOOKAHEAD_CHUNKS);
    std::thread::spawn(move || read_lines(input, send, text));
    let mut lines = Lines { chunks, chunk: Vec::new().into_iter() };
    let mut refused = 0usize;
    let mut batch: Vec<api::NumberedLine> = Vec::new();
    let mut bytes = 0usize;
    let mut send_batch = |batch: &mut Vec<api::NumberedLine>, bytes: &mut usize, out: &mut Output| {
        if batch.is_empty() {
            return Ok::<(), CliError>(());
        }
        let call = Call::SaveLines(api::SaveLines { lines: std::mem::take(batch), allow_secret });
        *bytes = 0;
        let reply = server.call(ctx, call)?;
        refused += reply.refused;
        // (The answer is read by the call's kind: the lines sent are not needed again.)
        let answered = Call::SaveLines(api::SaveLines { lines: Vec::new(), allow_secret });
        crate::backend::print_reply(&answered, &reply, out, true)?;
        out.flush()
    };
    loop {
        let line = match lines.next(Receiver::try_recv) {
            Ok(line) => line,
            Err(TryRecvError::Empty) => {
                send_batch(&mut batch, &mut bytes, out)?;
                match lines.next(Receiver::recv) {
                    Ok(line) => line,
                    Err(_) => break,
                }
            }
            Err(TryRecvError::Disconnected) => break,
        };
        let line = line?;
        if let Some((text, not_utf8)) = line.save {
            bytes += text.len();
            batch.push(api::NumberedLine { line: line.number, text, not_utf8 });
        }
        if batch.len() >= MAX_GROUP || bytes >= MAX_BATCH_BYTES {
            send_batch(&mut batch, &mut bytes, out)?;
        }
    }
    send_batch(&mut batch, &mut bytes, out)?;
    refused_error(refused, out)
}

/// Lines the reading thread hands over at once at most. Handed over one at a time, every line
/// the saving thread took from a full channel would wake the reading thread: a system call per
/// line.
const CHUNK_LINES: usize = 64;

/// Chunks the reading thread may prepare ahead of the saving one.
const LOOKAHEAD_CHUNKS: usize = 4;

/// The saving thread's end of the reading thread's chunks, a line at a time.
struct Lines<T = Result<PreparedSave, String>> {
    chunks: Receiver<Vec<std::io::Result<Line<T>>>>,
    chunk: std::vec::IntoIter<std::io::Result<Line<T>>>,
}

impl<T> Lines<T> {
    /// The next line, from the chunk in hand or else from the next one `receive` takes
    /// (`Receiver::try_recv`: only if one is ready; `Receiver::recv`: waiting for one).
    fn next<E>(
        &mut self,
        receive: impl Fn(&Receiver<Vec<std::io::Result<Line<T>>>>) -> Result<Vec<std::io::Result<Line<T>>>, E>,
    ) -> Result<std::io::Result<Line<T>>, E> {
        loop {
            if let Some(line) = self.chunk.next() {
                return Ok(line);
            }
            self.chunk = receive(&self.chunks)?.into_iter();
        }
    }
}

/// One line of `save --from`, as the reading thread hands it over.
struct Line<T> {
    number: usize,
    /// The bytes it took, for the progress bar.
    bytes: u64,
    /// What the line became (the save prepared from it, or why it is refused); `None` for a
    /// blank line.
    save: Option<T>,
}

/// Read `input` line by line and hand the lines over prepared, in chunks, until the input ends,
/// a read fails (handed over as the last item) or nobody receives.
///
/// A chunk goes as soon as the next line needs another read of the input, which may wait: so a
/// writer feeding lines one at a time (or a line and part of the next) still gets each answer
/// at once.
fn read_lines<T>(
    input: Box<dyn Read + Send>,
    send: SyncSender<Vec<std::io::Result<Line<T>>>>,
    prepare: impl Fn(&[u8]) -> T,
) {
    let mut reader = BufReader::with_capacity(1 << 16, input);
    let mut text = Vec::new();
    let mut chunk = Vec::with_capacity(CHUNK_LINES);
    for number in 1.. {
        text.clear();
        let line = match reader.read_until(b'\n', &mut text) {
            Ok(0) => break,
            Ok(bytes) => {
                let blank = text.iter().all(|b| b.is_ascii_whitespace());
                Ok(Line { number, bytes: bytes as u64, save: (!blank).then(|| prepare(&text)) })
            }
            Err(e) => Err(e),
        };
        let failed = line.is_err();
        chunk.push(line);
        if failed {
            break;
        }
        // No whole line left in the buffer: the next one needs a read, which may wait.
        if chunk.len() == CHUNK_LINES || !reader.buffer().contains(&b'\n') {
            let full = std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK_LINES));
            if send.send(full).is_err() {
                return;
            }
        }
    }
    if !chunk.is_empty() {
        let _ = send.send(chunk);
    }
}

/// Make the group durable, then answer each of its lines in order. Without a store, every pending
/// answer is a refusal and there is nothing to make durable.
fn flush(
    ml: Option<&Memledger>,
    out: &mut Output,
    pending: &mut Vec<LineAnswer>,
    refused: &mut usize,
) -> Result<(), CliError> {
    if pending.is_empty() {
        return Ok(());
    }
    if let Some(ml) = ml {
        ml.sync()?;
    }
    for answer in pending.drain(..) {
        if matches!(answer, LineAnswer::Refused { .. }) {
            *refused += 1;
        }
        print_line(out, &answer)?;
    }
    out.flush()
}
