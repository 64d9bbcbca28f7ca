//! `memledger classify`: the classifier as a dry run; writes nothing, needs no store.

use memledger_engine::error::Exit;
use std::io::BufRead;

use std::collections::HashMap;

use memledger_engine::EngineConfig;
use memledger_engine::classify::{Classification, classify_lexical};
use memledger_engine::input::{parse_type, validate_text};
use memledger_engine::models::embed::{cosine, gate_identical};
use memledger_engine::models::{EmbedSide, ModelConfig, Models};
use serde::Deserialize;
use serde_json::json;

use crate::app::Context;
use crate::output::{CliError, Output};

/// Classify a pair of texts (or every pair in a JSON Lines file) without writing anything.
///
/// With an embedder configured (MEMLEDGER_EMBED_URL and MEMLEDGER_EMBED_MODEL, docs/models.md)
/// both texts are embedded: the cosine is reported and a lexical `identical` stands only at
/// MEMLEDGER_EMBED_IDENTICAL_MIN or above, as when saving. A failing embedder is an error here.
///
/// Example: memledger classify "deploy on Tuesday" "do not deploy on Tuesday"
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The incoming text.
    #[arg(required_unless_present = "pairs", conflicts_with = "pairs")]
    pub a: Option<String>,
    /// The stored text.
    #[arg(required_unless_present = "pairs")]
    pub b: Option<String>,
    #[arg(long, value_name = "TYPE")]
    pub type_a: Option<String>,
    #[arg(long, value_name = "TYPE")]
    pub type_b: Option<String>,
    /// JSON Lines of {"id", "a", "b"[, "type_a", "type_b"]}; prints one JSON line per pair.
    #[arg(long, value_name = "FILE")]
    pub pairs: Option<String>,
}

#[derive(Deserialize)]
struct Pair {
    id: serde_json::Value,
    a: String,
    b: String,
    type_a: Option<String>,
    type_b: Option<String>,
}

/// The embedder from the environment, when configured: it embeds every text once.
struct Embedder {
    models: Models,
    model: String,
    min: f64,
}

impl Embedder {
    fn from_env() -> Option<Embedder> {
        // As every command reads them: the environment, then the config file (cli/src/config.rs).
        let config = ModelConfig::from_lookup(crate::config::model_setting);
        for note in &config.notes {
            eprintln!("memledger: {note}");
        }
        let model = config.embed.as_ref()?.model.clone();
        let min = config.identical_cosine_min;
        Some(Embedder { models: Models::new(config), model, min })
    }

    /// The vector of every distinct text, in one pass (batches of 64).
    fn vectors(&self, texts: &[&str]) -> Result<HashMap<String, Vec<f32>>, CliError> {
        let mut distinct: Vec<String> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for t in texts {
            if seen.insert(*t) {
                distinct.push(t.to_string());
            }
        }
        match self.models.embed_texts(&distinct, EmbedSide::Document) {
            Some(Ok(vs)) if vs.len() == distinct.len() => Ok(distinct.into_iter().zip(vs).collect()),
            Some(Ok(_)) => Err(CliError::new(
                Exit::Failure,
                format!("embedder {} answered the wrong number of vectors", self.model),
                None,
            )),
            Some(Err(e)) => Err(CliError::new(
                Exit::Failure,
                format!("embedder {} failed: {e}", self.model),
                Some("unset MEMLEDGER_EMBED_URL to classify with the lexical rules alone".into()),
            )),
            None => Ok(HashMap::new()),
        }
    }

    /// Record the cosine and apply the identical gate; the cosine.
    fn apply(&self, c: &mut Classification, a: &[f32], b: &[f32]) -> f64 {
        let cos = cosine(a, b);
        c.scores.push(("cosine".into(), cos));
        gate_identical(c, cos, self.min, &self.model);
        cos
    }
}

pub fn run(_ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    let config = EngineConfig::default();
    let embedder = Embedder::from_env();
    if let Some(path) = &args.pairs {
        let reader: Box<dyn BufRead> = if path == "-" {
            Box::new(std::io::BufReader::new(std::io::stdin()))
        } else {
            Box::new(std::io::BufReader::new(
                std::fs::File::open(path).map_err(|e| CliError::bad_input(format!("cannot read {path}: {e}")))?,
            ))
        };
        // Read every pair first, so that all texts are embedded in one pass.
        let mut pairs = Vec::new();
        for (i, line) in reader.lines().enumerate() {
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            let pair: Pair = serde_json::from_str(&line)
                .map_err(|e| CliError::bad_input(format!("line {}: not a pair: {e}", i + 1)))?;
            let ta = pair.type_a.as_deref().map(parse_type).transpose()?;
            let tb = pair.type_b.as_deref().map(parse_type).transpose()?;
            pairs.push((pair, ta, tb));
        }
        let vectors = match &embedder {
            Some(e) => {
                let texts: Vec<&str> = pairs.iter().flat_map(|(p, _, _)| [p.a.trim(), p.b.trim()]).collect();
                e.vectors(&texts)?
            }
            None => HashMap::new(),
        };
        for (pair, ta, tb) in pairs {
            let (a, b) = (pair.a.trim(), pair.b.trim());
            let mut c = classify_lexical(a, b, ta, tb, &config);
            let cos = match (&embedder, vectors.get(a), vectors.get(b)) {
                (Some(e), Some(va), Some(vb)) => Some(e.apply(&mut c, va, vb)),
                _ => None,
            };
            out.json_line(&json!({
                "id": pair.id, "relation": c.relation, "score": c.score, "method": c.method,
                "gate": c.gate, "reason": c.reason, "cosine": cos,
            }))?;
        }
        return Ok(());
    }
    let a = validate_text(&super::text_arg(args.a.as_deref().unwrap_or_default())?)?;
    let b = validate_text(args.b.as_deref().unwrap_or_default())?;
    let ta = args.type_a.as_deref().map(parse_type).transpose()?;
    let tb = args.type_b.as_deref().map(parse_type).transpose()?;
    let mut c = classify_lexical(&a, &b, ta, tb, &config);
    let mut cos = None;
    if let Some(e) = &embedder {
        let vectors = e.vectors(&[&a, &b])?;
        if let (Some(va), Some(vb)) = (vectors.get(a.as_str()), vectors.get(b.as_str())) {
            cos = Some(e.apply(&mut c, va, vb));
        }
    }
    if out.json {
        return out.json_line(&c);
    }
    let cos = cos.map(|c| format!(", cosine {c:.3}")).unwrap_or_default();
    out.line(format!("{}  (score {:.3}{cos}, {} gate {})", c.relation, c.score, c.method, c.gate))?;
    out.line(format!("  {}", c.reason))
}
