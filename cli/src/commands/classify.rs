//! `memledger classify`: the classifier as a dry run; writes nothing, needs no store.

use memledger_engine::error::Exit;
use std::io::BufRead;

use std::collections::HashMap;

use memledger_engine::EngineConfig;
use memledger_engine::classify::{Classification, classify_lexical, classify_lexical_admitted, lexical};
use memledger_engine::input::{parse_type, validate_text};
use memledger_engine::models::embed::{cosine, gate_identical};
use memledger_engine::models::{EmbedSide, ModelConfig, Models};
use memledger_schemas::MemoryType;
use serde::Deserialize;
use serde_json::json;

use crate::app::Context;
use crate::output::{CliError, Output};

/// Classify a pair of texts (or every pair in a JSON Lines file) without writing anything.
///
/// With an embedder configured (MEMLEDGER_EMBED_URL and MEMLEDGER_EMBED_MODEL, docs/models.md)
/// both texts are embedded: the cosine is reported, a pair whose cosine is in the model's related
/// band is compared by the rules of change whatever its lexical similarity, and a lexical
/// `identical` stands only at MEMLEDGER_EMBED_IDENTICAL_MIN or above, as when saving. A failing
/// embedder is an error here.
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

/// Two texts and their types, incoming first.
type Texts<'a> = (&'a str, &'a str, Option<MemoryType>, Option<MemoryType>);

/// A pair classified, with the embedder's cosine when one is configured.
fn classify_pair(
    embedder: Option<&Embedder>,
    vectors: &HashMap<String, Vec<f32>>,
    pair: Texts,
    config: &EngineConfig,
) -> (Classification, Option<f64>) {
    match (embedder, vectors.get(pair.0), vectors.get(pair.1)) {
        (Some(e), Some(va), Some(vb)) => {
            let (c, cos) = e.classify(pair, (va, vb), config);
            (c, Some(cos))
        }
        _ => (classify_lexical(pair.0, pair.1, pair.2, pair.3, config), None),
    }
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
    related_min: f64,
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
        let models = Models::new(config);
        let related_min = models.related_cosine_min()?;
        Some(Embedder { models, model, min, related_min })
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

    /// Classify a pair as a save would with these vectors: admitted by the cosine, recorded,
    /// and under the identical gate.
    fn classify(&self, pair: Texts, vectors: (&[f32], &[f32]), config: &EngineConfig) -> (Classification, f64) {
        let cos = cosine(vectors.0, vectors.1);
        let admission = lexical::Admission { cosine: cos, min: self.related_min };
        let mut c = classify_lexical_admitted(
            &lexical::analyse(pair.0),
            &lexical::analyse(pair.1),
            pair.2,
            pair.3,
            config,
            Some(admission),
        );
        c.scores.push(("cosine".into(), cos));
        gate_identical(&mut c, cos, self.min, &self.model);
        (c, cos)
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
            let (c, cos) = classify_pair(embedder.as_ref(), &vectors, (a, b, ta, tb), &config);
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
    let vectors = match &embedder {
        Some(e) => e.vectors(&[&a, &b])?,
        None => HashMap::new(),
    };
    let (c, cos) = classify_pair(embedder.as_ref(), &vectors, (&a, &b, ta, tb), &config);
    if out.json {
        return out.json_line(&c);
    }
    let cos = cos.map(|c| format!(", cosine {c:.3}")).unwrap_or_default();
    out.line(format!("{}  (score {:.3}{cos}, {} gate {})", c.relation, c.score, c.method, c.gate))?;
    out.line(format!("  {}", c.reason))
}
