//! Which models to use, from the environment or given by the library caller.
//!
//! Without configuration nothing changes: the save pipeline is the offline lexical one, the
//! contradiction scan is lexical, and `conflicts auto` refuses (it needs a model).

use std::time::Duration;

use super::prompts::EmbedPrompts;

/// The environment variables read by [`ModelConfig::from_env`] (docs/models.md).
pub const ENV_LLM_URL: &str = "MEMLEDGER_LLM_URL";
pub const ENV_LLM_MODEL: &str = "MEMLEDGER_LLM_MODEL";
pub const ENV_LLM_API_KEY: &str = "MEMLEDGER_LLM_API_KEY";
pub const ENV_EMBED_URL: &str = "MEMLEDGER_EMBED_URL";
pub const ENV_EMBED_MODEL: &str = "MEMLEDGER_EMBED_MODEL";
pub const ENV_EMBED_API_KEY: &str = "MEMLEDGER_EMBED_API_KEY";
/// A reranker (`POST {base}/rerank`): recall's first results reordered by a model that reads the
/// question against each memory.
pub const ENV_RERANK_URL: &str = "MEMLEDGER_RERANK_URL";
pub const ENV_RERANK_MODEL: &str = "MEMLEDGER_RERANK_MODEL";
pub const ENV_RERANK_API_KEY: &str = "MEMLEDGER_RERANK_API_KEY";
/// What is put before a recall query's text for the embedder (default: the model family's,
/// `models::prompts`); `none` for nothing.
pub const ENV_EMBED_QUERY_PROMPT: &str = "MEMLEDGER_EMBED_QUERY_PROMPT";
/// What is put before a memory's text for the embedder; `none` for nothing.
pub const ENV_EMBED_DOCUMENT_PROMPT: &str = "MEMLEDGER_EMBED_DOCUMENT_PROMPT";
/// Send `input_type` (`query`, `passage`) with every embedding request, for servers that apply
/// the model's prompts themselves; the text prompts then default to none.
pub const ENV_EMBED_INPUT_TYPE: &str = "MEMLEDGER_EMBED_INPUT_TYPE";
/// Seconds one model call may take before it counts as failed (default 20).
pub const ENV_TIMEOUT: &str = "MEMLEDGER_MODEL_TIMEOUT";
/// Extra attempts after a refused connection, an HTTP 429 or a 5xx (default 1).
pub const ENV_RETRIES: &str = "MEMLEDGER_MODEL_RETRIES";
/// The cosine a lexical `identical` verdict needs when an embedder is configured (default
/// [`DEFAULT_IDENTICAL_COSINE_MIN`]; cosine ranges differ between models).
pub const ENV_EMBED_IDENTICAL_MIN: &str = "MEMLEDGER_EMBED_IDENTICAL_MIN";
/// Calibrated on multilingual-e5-small (docs/quality.md): the best macro-F1 on SICK, with no
/// more false merges than the lexical rules alone.
pub const DEFAULT_IDENTICAL_COSINE_MIN: f64 = 0.97;
/// The cosine at or above which the embedder admits a pair to the rules of change whatever its
/// lexical similarity (default: its model family's, `models::embed::related_band`).
pub const ENV_EMBED_RELATED_MIN: &str = "MEMLEDGER_EMBED_RELATED_MIN";
/// API keys tried, in order, when the memledger-specific one is not set.
pub const FALLBACK_KEYS: &[&str] = &["OPENROUTER_API_KEY", "OPENAI_API_KEY"];

/// One OpenAI-compatible endpoint and the model to ask there.
#[derive(Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The base URL, e.g. `http://127.0.0.1:11434/v1` (`/chat/completions` or `/embeddings` is
    /// appended).
    pub url: String,
    pub model: String,
    /// Sent as `Authorization: Bearer …` when present.
    pub api_key: Option<String>,
    /// One attempt's limit (connect, send and read the whole answer).
    pub timeout: Duration,
    /// Extra attempts after a quick failure (refused connection, HTTP 429 or 5xx). A timeout is
    /// never retried, so a call takes at most about `timeout` plus the short backoffs.
    pub retries: u32,
    /// Calls in flight at once (across candidates, conflicts or pairs).
    pub concurrency: usize,
}

impl Endpoint {
    pub fn new(url: impl Into<String>, model: impl Into<String>) -> Self {
        Endpoint {
            url: url.into(),
            model: model.into(),
            api_key: None,
            timeout: DEFAULT_TIMEOUT,
            retries: DEFAULT_RETRIES,
            concurrency: DEFAULT_CONCURRENCY,
        }
    }

    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    pub fn with_retries(mut self, retries: u32) -> Self {
        self.retries = retries;
        self
    }

    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// `base` + `path`, with exactly one slash between.
    pub fn join(&self, path: &str) -> String {
        format!("{}/{}", self.url.trim_end_matches('/'), path.trim_start_matches('/'))
    }

    /// The host of the URL (what a trace names as `server.address`).
    pub fn host(&self) -> String {
        reqwest::Url::parse(&self.url).ok().and_then(|u| u.host_str().map(str::to_string)).unwrap_or_default()
    }
}

/// The key is never printed.
impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("url", &self.url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .field("timeout", &self.timeout)
            .field("retries", &self.retries)
            .field("concurrency", &self.concurrency)
            .finish()
    }
}

pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);
pub const DEFAULT_RETRIES: u32 = 1;
pub const DEFAULT_CONCURRENCY: usize = 8;

/// The models in force: each one optional.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelConfig {
    /// Chat completions: save-time classification, the judge, the scan.
    pub llm: Option<Endpoint>,
    /// `/embeddings`: an extra candidate source, recall's cosine ranking, the identical gate.
    pub embed: Option<Endpoint>,
    /// `/rerank`: recall's first results reordered (`recall::RERANK_DEPTH`).
    pub rerank: Option<Endpoint>,
    /// With an embedder, a lexical `identical` verdict stands only at this cosine or above
    /// (`models::embed::gate_identical`).
    pub identical_cosine_min: f64,
    /// With an embedder, a pair at this cosine or above is compared by the rules of change even
    /// below the lexical related band; `None`: the model family's (`models::embed::related_band`).
    pub related_cosine_min: Option<f64>,
    /// The embedding prompts configured over the model family's (`models::prompts`).
    pub embed_prompts: PromptSettings,
    /// What was wrong with the environment (a URL without a model, a bad number): said once at open.
    pub notes: Vec<String>,
}

/// Embedding prompts as configured: each `None` leaves the model family's.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PromptSettings {
    pub query: Option<String>,
    pub document: Option<String>,
    pub input_type: bool,
}

impl PromptSettings {
    /// The prompts in force for `model`.
    pub fn for_model(&self, model: &str) -> EmbedPrompts {
        EmbedPrompts::configured(model, self.query.clone(), self.document.clone(), self.input_type)
    }
}

/// A configured prompt: the text as given (its spaces matter), or nothing for `none`.
fn prompt_setting(value: Option<String>) -> Option<String> {
    value.map(|v| if v.trim().eq_ignore_ascii_case("none") { String::new() } else { v })
}

impl Default for ModelConfig {
    fn default() -> Self {
        ModelConfig {
            llm: None,
            embed: None,
            rerank: None,
            identical_cosine_min: DEFAULT_IDENTICAL_COSINE_MIN,
            related_cosine_min: None,
            embed_prompts: PromptSettings::default(),
            notes: Vec::new(),
        }
    }
}

impl ModelConfig {
    /// No models: the offline lexical path.
    pub fn none() -> Self {
        ModelConfig::default()
    }

    /// Read the process environment.
    pub fn from_env() -> Self {
        Self::from_lookup(|name| std::env::var(name).ok())
    }

    /// Read settings through `get` (the environment, or a map in tests). Empty values count as unset.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Self {
        // Prompts keep their spaces ("query: "); every other value is trimmed.
        let raw = |name: &str| get(name).filter(|v| !v.is_empty());
        let embed_prompts = PromptSettings {
            query: prompt_setting(raw(ENV_EMBED_QUERY_PROMPT)),
            document: prompt_setting(raw(ENV_EMBED_DOCUMENT_PROMPT)),
            input_type: false,
        };
        let get = |name: &str| get(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let mut notes = Vec::new();
        let timeout = match get(ENV_TIMEOUT) {
            None => DEFAULT_TIMEOUT,
            Some(v) => match v.parse::<f64>() {
                Ok(s) if s.is_finite() && s > 0.0 && s <= 3600.0 => Duration::from_secs_f64(s),
                _ => {
                    notes.push(format!("{ENV_TIMEOUT}={v:?} is not a number of seconds; using {DEFAULT_TIMEOUT:?}"));
                    DEFAULT_TIMEOUT
                }
            },
        };
        let retries = match get(ENV_RETRIES) {
            None => DEFAULT_RETRIES,
            Some(v) => match v.parse::<u32>() {
                Ok(n) if n <= 5 => n,
                _ => {
                    notes.push(format!("{ENV_RETRIES}={v:?} is not a count from 0 to 5; using {DEFAULT_RETRIES}"));
                    DEFAULT_RETRIES
                }
            },
        };
        let identical_cosine_min = match get(ENV_EMBED_IDENTICAL_MIN) {
            None => DEFAULT_IDENTICAL_COSINE_MIN,
            Some(v) => match v.parse::<f64>() {
                Ok(x) if (0.0..=1.0).contains(&x) => x,
                _ => {
                    notes.push(format!(
                        "{ENV_EMBED_IDENTICAL_MIN}={v:?} is not a cosine from 0 to 1; using {DEFAULT_IDENTICAL_COSINE_MIN}"
                    ));
                    DEFAULT_IDENTICAL_COSINE_MIN
                }
            },
        };
        let related_cosine_min = get(ENV_EMBED_RELATED_MIN).and_then(|v| match v.parse::<f64>() {
            Ok(x) if (0.0..=1.0).contains(&x) => Some(x),
            _ => {
                notes.push(format!(
                    "{ENV_EMBED_RELATED_MIN}={v:?} is not a cosine from 0 to 1; using the model family's"
                ));
                None
            }
        });
        let fallback_key = || FALLBACK_KEYS.iter().find_map(|k| get(k));
        let mut endpoint = |url_var: &str, model_var: &str, key: Option<String>| -> Option<Endpoint> {
            match (get(url_var), get(model_var)) {
                (Some(url), Some(model)) => {
                    Some(Endpoint { url, model, api_key: key, timeout, retries, concurrency: DEFAULT_CONCURRENCY })
                }
                (Some(_), None) => {
                    notes.push(format!("{url_var} is set but {model_var} is not: that model is off"));
                    None
                }
                (None, Some(_)) => {
                    notes.push(format!("{model_var} is set but {url_var} is not: that model is off"));
                    None
                }
                (None, None) => None,
            }
        };
        let llm_key = get(ENV_LLM_API_KEY).or_else(fallback_key);
        let llm = endpoint(ENV_LLM_URL, ENV_LLM_MODEL, llm_key.clone());
        let embed_key = get(ENV_EMBED_API_KEY).or(llm_key);
        let embed = endpoint(ENV_EMBED_URL, ENV_EMBED_MODEL, embed_key.clone());
        let rerank_key = get(ENV_RERANK_API_KEY).or(embed_key);
        let rerank = endpoint(ENV_RERANK_URL, ENV_RERANK_MODEL, rerank_key);
        let input_type = match get(ENV_EMBED_INPUT_TYPE).map(|v| v.to_ascii_lowercase()) {
            None => false,
            Some(v) if matches!(v.as_str(), "1" | "true" | "yes" | "on") => true,
            Some(v) if matches!(v.as_str(), "0" | "false" | "no" | "off") => false,
            Some(v) => {
                notes.push(format!("{ENV_EMBED_INPUT_TYPE}={v:?} is not 1 or 0; input_type is not sent"));
                false
            }
        };
        let embed_prompts = PromptSettings { input_type, ..embed_prompts };
        ModelConfig { llm, embed, rerank, identical_cosine_min, related_cosine_min, embed_prompts, notes }
    }

    /// Whether any model is configured.
    pub fn any(&self) -> bool {
        self.llm.is_some() || self.embed.is_some() || self.rerank.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn cfg(pairs: &[(&str, &str)]) -> ModelConfig {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        ModelConfig::from_lookup(|k| map.get(k).cloned())
    }

    #[test]
    fn nothing_set_means_offline() {
        let c = cfg(&[]);
        assert!(c.llm.is_none() && c.embed.is_none() && c.notes.is_empty());
    }

    #[test]
    fn llm_needs_url_and_model_and_falls_back_on_keys() {
        let c = cfg(&[(ENV_LLM_URL, "http://127.0.0.1:1/v1"), (ENV_LLM_MODEL, "m"), ("OPENAI_API_KEY", "k2")]);
        let llm = c.llm.unwrap();
        assert_eq!(llm.api_key.as_deref(), Some("k2"));
        assert_eq!(llm.join("chat/completions"), "http://127.0.0.1:1/v1/chat/completions");
        let c = cfg(&[
            (ENV_LLM_URL, "http://x/v1/"),
            (ENV_LLM_MODEL, "m"),
            ("OPENROUTER_API_KEY", "k1"),
            ("OPENAI_API_KEY", "k2"),
        ]);
        assert_eq!(c.llm.as_ref().unwrap().api_key.as_deref(), Some("k1"));
        assert_eq!(c.llm.unwrap().join("/chat/completions"), "http://x/v1/chat/completions");
        let c = cfg(&[
            (ENV_LLM_URL, "http://x/v1"),
            (ENV_LLM_MODEL, "m"),
            (ENV_LLM_API_KEY, "k0"),
            ("OPENAI_API_KEY", "k2"),
        ]);
        assert_eq!(c.llm.unwrap().api_key.as_deref(), Some("k0"));
        let c = cfg(&[(ENV_LLM_URL, "http://x/v1")]);
        assert!(c.llm.is_none());
        assert_eq!(c.notes.len(), 1);
    }

    #[test]
    fn timeouts_and_retries_are_read_and_checked() {
        let c = cfg(&[(ENV_EMBED_URL, "u"), (ENV_EMBED_MODEL, "e"), (ENV_TIMEOUT, "1.5"), (ENV_RETRIES, "0")]);
        let e = c.embed.unwrap();
        assert_eq!(e.timeout, Duration::from_millis(1500));
        assert_eq!(e.retries, 0);
        let c = cfg(&[(ENV_TIMEOUT, "soon"), (ENV_RETRIES, "99")]);
        assert_eq!(c.notes.len(), 2);
        assert_eq!(cfg(&[]).identical_cosine_min, DEFAULT_IDENTICAL_COSINE_MIN);
        assert_eq!(cfg(&[(ENV_EMBED_IDENTICAL_MIN, "0.9")]).identical_cosine_min, 0.9);
        let c = cfg(&[(ENV_EMBED_IDENTICAL_MIN, "1.5")]);
        assert_eq!((c.identical_cosine_min, c.notes.len()), (DEFAULT_IDENTICAL_COSINE_MIN, 1));
    }

    #[test]
    fn prompts_keep_their_spaces_and_none_is_nothing() {
        let c = cfg(&[(ENV_EMBED_QUERY_PROMPT, "query: "), (ENV_EMBED_DOCUMENT_PROMPT, "None")]);
        assert_eq!(c.embed_prompts.query.as_deref(), Some("query: "));
        assert_eq!(c.embed_prompts.document.as_deref(), Some(""));
        let p = c.embed_prompts.for_model("bge-small-en-v1.5");
        assert_eq!((p.query.as_str(), p.document.as_str()), ("query: ", ""));
        assert_eq!(cfg(&[]).embed_prompts, PromptSettings::default());
        assert!(cfg(&[(ENV_EMBED_INPUT_TYPE, "yes")]).embed_prompts.input_type);
        let c = cfg(&[(ENV_EMBED_INPUT_TYPE, "maybe")]);
        assert!(!c.embed_prompts.input_type && c.notes.len() == 1);
    }

    #[test]
    fn the_reranker_needs_url_and_model_and_falls_back_on_the_embedders_key() {
        let c = cfg(&[(ENV_RERANK_URL, "http://127.0.0.1:1/v1"), (ENV_RERANK_MODEL, "r"), (ENV_EMBED_API_KEY, "ke")]);
        let rerank = c.rerank.unwrap();
        assert_eq!((rerank.model.as_str(), rerank.api_key.as_deref()), ("r", Some("ke")));
        assert_eq!(rerank.join("rerank"), "http://127.0.0.1:1/v1/rerank");
        let c =
            cfg(&[(ENV_RERANK_URL, "u"), (ENV_RERANK_MODEL, "r"), (ENV_RERANK_API_KEY, "kr"), ("OPENAI_API_KEY", "k")]);
        assert_eq!(c.rerank.unwrap().api_key.as_deref(), Some("kr"));
        let c = cfg(&[(ENV_RERANK_MODEL, "r")]);
        assert!(c.rerank.is_none() && c.notes.len() == 1 && !c.any());
    }

    #[test]
    fn the_key_is_not_printed() {
        let e = Endpoint::new("u", "m").with_api_key("secret");
        assert!(!format!("{e:?}").contains("secret"));
    }
}
