//! Input validation: bad input is refused here, before anything is read or written.

use memledger_schemas::{Authority, Evidence, MemoryId, MemoryType, Timestamp};
use serde::Deserialize;

use crate::error::{BadInput, EngineError};
use crate::expiry::ExpiryChange;

/// Longest text a memory may hold.
pub const MAX_TEXT_BYTES: usize = 64 * 1024;
const MAX_FIELD_BYTES: usize = 1024;

/// A save as the caller gives it (one line of `save --from`, or the flags of `save`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SaveRequest {
    pub text: String,
    #[serde(rename = "type")]
    pub memory_type: Option<String>,
    pub scope: Option<String>,
    /// The authority claimed: `stated`, `policy`, `inferred` or `imported` (docs/design.md §13).
    pub source: Option<String>,
    /// Where it came from, in the caller's words: the same origin again is one source.
    pub origin: Option<String>,
    /// Where in a transcript it was said (`import sessions`).
    pub evidence: Option<EvidenceRequest>,
    pub effective_at: Option<String>,
    pub fact_key: Option<String>,
    pub idempotency_key: Option<String>,
    #[serde(default)]
    pub no_dedup: bool,
    /// Save the text even if it holds what looks like a credential (engine/src/secrets.rs).
    #[serde(default)]
    pub allow_secret: bool,
    /// The caller's own judgement (docs/design.md §15): this memory replaces that one (an id or
    /// a unique prefix), as its next version, within what its authority allows.
    #[serde(default)]
    pub replaces: Option<String>,
    /// The caller's own judgement: this memory contradicts that one; a conflict opens.
    #[serde(default)]
    pub contradicts: Option<String>,
    /// When it stops being true (RFC 3339), unless renewed (engine/src/expiry.rs).
    #[serde(default)]
    pub expires_at: Option<String>,
    /// Its time to live (`30m`, `14d`): it expires that long after the save, unless
    /// `expires_at` says when; a refresh renews it by this.
    #[serde(default)]
    pub ttl: Option<String>,
    /// It no longer expires: a save of a text held with an expiry clears it.
    #[serde(default)]
    pub no_expiry: bool,
}

/// A relation the caller declares (`save --replaces`, `--contradicts`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeclaredRelation {
    Replaces,
    Contradicts,
}

/// A declared relation: the memory it names, as given, and once resolved.
#[derive(Clone, Debug)]
pub struct Declared {
    pub relation: DeclaredRelation,
    pub target: String,
    /// Resolved (and the caller's right to read it checked) before the save plans.
    pub id: Option<MemoryId>,
}

/// Where in a transcript a memory was said, as a caller gives it.
#[derive(Clone, Debug, Default, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct EvidenceRequest {
    /// `claude-code`, `codex` or `plain`.
    pub agent: String,
    #[serde(default)]
    pub session: Option<String>,
    /// The transcript's path.
    pub file: String,
    /// The supporting lines, from 1, inclusive.
    pub first_line: u32,
    pub last_line: u32,
    #[serde(default)]
    pub message_ids: Vec<String>,
    /// The supporting lines' words (secrets and `<private>` spans are refused and removed as in
    /// the text).
    #[serde(default)]
    pub excerpt: String,
    /// When it was said (RFC 3339).
    #[serde(default)]
    pub observed_at: Option<String>,
}

/// Most message ids a memory's evidence names.
const MAX_MESSAGE_IDS: usize = 1000;

impl EvidenceRequest {
    fn validate(self, allow_secret: bool) -> Result<Evidence, EngineError> {
        let agent = field("evidence.agent", Some(self.agent))?.unwrap_or_default();
        let file = field("evidence.file", Some(self.file))?.unwrap_or_default();
        let session = field("evidence.session", self.session)?;
        if self.first_line == 0 || self.last_line < self.first_line {
            return Err(BadInput::EvidenceLines { first: self.first_line, last: self.last_line }.into());
        }
        if self.message_ids.len() > MAX_MESSAGE_IDS {
            return Err(BadInput::FieldTooLong { field: "evidence.message_ids", max: MAX_MESSAGE_IDS }.into());
        }
        let message_ids = self
            .message_ids
            .into_iter()
            .map(|id| field("evidence.message_ids", Some(id)))
            .collect::<Result<Vec<_>, _>>()?;
        let (excerpt, _) = remove_private_spans(&self.excerpt);
        let excerpt = normalize_text(&excerpt);
        if excerpt.len() > MAX_TEXT_BYTES {
            return Err(BadInput::TextTooLong { len: excerpt.len(), max: MAX_TEXT_BYTES }.into());
        }
        if !allow_secret {
            refuse_secrets("evidence's excerpt", &excerpt)?;
        }
        let observed_at = match self.observed_at {
            Some(s) => Some(Timestamp::parse_rfc3339(&s).map_err(BadInput::ObservedAt)?),
            None => None,
        };
        Ok(Evidence {
            agent,
            session,
            file,
            first_line: self.first_line,
            last_line: self.last_line,
            message_ids: message_ids.into_iter().flatten().collect(),
            excerpt,
            observed_at,
        })
    }
}

/// A save that passed validation.
#[derive(Clone, Debug)]
pub struct ValidSave {
    pub text: String,
    pub memory_type: MemoryType,
    /// The scope named; none: the caller's own (the owner's: `personal`).
    pub scope: String,
    /// Whether the request named the scope.
    pub scope_named: bool,
    /// The authority the request claimed, if it named one.
    pub authority: Option<Authority>,
    pub origin: Option<String>,
    pub evidence: Option<Evidence>,
    pub effective_at: Option<Timestamp>,
    pub fact_key: Option<String>,
    pub idempotency_key: Option<String>,
    pub dedup: bool,
    /// How many `<private>…</private>` spans were removed from the text.
    pub private_spans: u32,
    /// A relation the caller declared.
    pub declared: Option<Declared>,
    /// What the save says of the expiry.
    pub expiry: ExpiryChange,
    /// When it was validated: the time a time to live counts from, and at which a held
    /// memory's expiry has passed or not.
    pub now: Timestamp,
}

/// The tags around text that never reaches the store (the convention coding-agent memory tools
/// use): removed with what they enclose before anything is stored or hashed.
const PRIVATE_OPEN: &str = "<private>";
const PRIVATE_CLOSE: &str = "</private>";

/// `text` without its `<private>…</private>` spans (tags matched case-insensitively, not
/// nested; an unclosed tag hides the rest of the text), and how many there were.
pub fn remove_private_spans(text: &str) -> (String, u32) {
    let lower = text.to_ascii_lowercase();
    let (mut out, mut spans, mut at) = (String::with_capacity(text.len()), 0u32, 0usize);
    while let Some(open) = lower[at..].find(PRIVATE_OPEN).map(|i| at + i) {
        out.push_str(&text[at..open]);
        spans += 1;
        let inner = open + PRIVATE_OPEN.len();
        match lower[inner..].find(PRIVATE_CLOSE) {
            Some(close) => at = inner + close + PRIVATE_CLOSE.len(),
            None => return (out, spans),
        }
    }
    if spans == 0 {
        return (text.to_string(), 0);
    }
    out.push_str(&text[at..]);
    (out, spans)
}

/// Normalise a memory's text conservatively: line endings unified, surrounding whitespace
/// trimmed. Negation, punctuation, case and identifiers are evidence and are kept.
pub fn normalize_text(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n").trim().to_string()
}

/// Check a memory text.
pub fn validate_text(text: &str) -> Result<String, EngineError> {
    let text = normalize_text(text);
    if text.is_empty() {
        return Err(BadInput::EmptyText.into());
    }
    if text.len() > MAX_TEXT_BYTES {
        return Err(BadInput::TextTooLong { len: text.len(), max: MAX_TEXT_BYTES }.into());
    }
    if text.contains('\0') {
        return Err(BadInput::NulInText.into());
    }
    Ok(text)
}

fn field(name: &'static str, value: Option<String>) -> Result<Option<String>, EngineError> {
    let Some(v) = value else { return Ok(None) };
    let v = v.trim().to_string();
    if v.is_empty() {
        return Err(BadInput::EmptyField { field: name }.into());
    }
    if v.len() > MAX_FIELD_BYTES {
        return Err(BadInput::FieldTooLong { field: name, max: MAX_FIELD_BYTES }.into());
    }
    if v.chars().any(|c| c.is_control()) {
        return Err(BadInput::ControlInField { field: name }.into());
    }
    Ok(Some(v))
}

/// Parse a memory type name.
pub fn parse_type(name: &str) -> Result<MemoryType, EngineError> {
    name.trim().parse::<MemoryType>().map_err(|e| BadInput::UnknownName(e).into())
}

impl SaveRequest {
    pub fn validate(self) -> Result<ValidSave, EngineError> {
        let (text, private_spans) = remove_private_spans(&self.text);
        let text = validate_text(&text)?;
        let memory_type = match &self.memory_type {
            Some(t) => parse_type(t)?,
            None => MemoryType::Fact,
        };
        let authority = match field("source", self.source)? {
            Some(s) => Some(s.parse::<Authority>().map_err(|e| BadInput::UnknownName(format!("--source: {e}")))?),
            None => None,
        };
        let origin = field("origin", self.origin)?;
        let fact_key = field("fact-key", self.fact_key)?;
        if !self.allow_secret {
            refuse_secrets("memory text", &text)?;
            refuse_secrets("--origin", origin.as_deref().unwrap_or_default())?;
            refuse_secrets("--fact-key", fact_key.as_deref().unwrap_or_default())?;
        }
        let evidence = self.evidence.map(|e| e.validate(self.allow_secret)).transpose()?;
        let scope = field("scope", self.scope)?;
        let scope_named = scope.is_some();
        let scope = scope.unwrap_or_else(|| "personal".to_string());
        let declared = match (field("replaces", self.replaces)?, field("contradicts", self.contradicts)?) {
            (Some(_), Some(_)) => return Err(BadInput::TwoDeclaredRelations.into()),
            (Some(target), None) => Some(Declared { relation: DeclaredRelation::Replaces, target, id: None }),
            (None, Some(target)) => Some(Declared { relation: DeclaredRelation::Contradicts, target, id: None }),
            (None, None) => None,
        };
        if declared.is_some() && self.no_dedup {
            return Err(BadInput::DeclaredWithoutDedup.into());
        }
        let effective_at = match self.effective_at {
            Some(s) => Some(Timestamp::parse_rfc3339(&s).map_err(BadInput::EffectiveAt)?),
            None => None,
        };
        let now = Timestamp::now();
        let expiry = ExpiryChange::of(self.expires_at.as_deref(), self.ttl.as_deref(), self.no_expiry, now)?;
        Ok(ValidSave {
            expiry,
            now,
            text,
            memory_type,
            scope,
            scope_named,
            authority,
            origin,
            evidence,
            effective_at,
            fact_key,
            idempotency_key: field("idempotency-key", self.idempotency_key)?,
            dedup: !self.no_dedup,
            private_spans,
            declared,
        })
    }
}

/// Refuse a text that holds a credential, naming the rules that matched (never the text).
pub fn refuse_secrets(field: &'static str, text: &str) -> Result<(), EngineError> {
    let found = crate::secrets::scan(text);
    if found.is_empty() {
        return Ok(());
    }
    let found = found.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
    Err(BadInput::SecretInText { field, found }.into())
}

/// Refuse an `update`'s text or a merged text that holds a credential.
pub fn refuse_secrets_in_revision(what: &'static str, text: &str) -> Result<(), EngineError> {
    refuse_secrets("text", text).map_err(|e| match e {
        EngineError::BadInput(BadInput::SecretInText { found, .. }) => {
            BadInput::SecretInRevision { what, found }.into()
        }
        other => other,
    })
}

/// Most lines an import's refusal lists.
const MAX_LISTED: usize = 20;

/// Refuse a stream whose memories hold credentials, listing every line that does with its rules.
pub fn refuse_secrets_in_stream(stream: &memledger_ledger::Stream) -> Result<(), EngineError> {
    let mut lines = Vec::new();
    for (line, event) in stream.numbered() {
        let memledger_schemas::EventBody::MemoryObserved(b) = &event.body else { continue };
        let excerpt = b.evidence.as_ref().map(|e| e.excerpt.as_str());
        let texts = [Some(b.text.as_str()), b.source.as_deref(), b.origin.as_deref(), b.fact_key.as_deref(), excerpt];
        let mut found: Vec<crate::secrets::Finding> = Vec::new();
        for f in texts.into_iter().flatten().flat_map(crate::secrets::scan) {
            if !found.contains(&f) {
                found.push(f);
            }
        }
        if !found.is_empty() {
            let found = found.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
            lines.push(format!("line {line}: {found}"));
        }
    }
    if lines.is_empty() {
        return Ok(());
    }
    let more = lines.len().saturating_sub(MAX_LISTED);
    lines.truncate(MAX_LISTED);
    let mut found = lines.join("; ");
    if more > 0 {
        found.push_str(&format!("; and {more} more line(s)"));
    }
    Err(BadInput::SecretsInStream { found }.into())
}

/// Check an actor name.
pub fn validate_actor(actor: &str) -> Result<String, EngineError> {
    field("actor", Some(actor.to_string())).map(|a| a.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::remove_private_spans;

    #[test]
    fn private_spans_are_removed_with_their_tags() {
        let cases = [
            ("no tags here", "no tags here", 0),
            ("deploy <private>token abc</private>on fridays", "deploy on fridays", 1),
            ("a<PRIVATE>x</Private>b<private>y</private>c", "abc", 2),
            ("keep this <private>and hide the rest", "keep this ", 1),
            ("a </private> stray close stays", "a </private> stray close stays", 0),
            ("<private>all of it</private>", "", 1),
        ];
        for (text, want, spans) in cases {
            assert_eq!(remove_private_spans(text), (want.to_string(), spans), "{text:?}");
        }
    }
}
