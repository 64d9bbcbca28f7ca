//! The store as MCP resources, for clients that attach context by hand (an `@` mention):
//! `memledger://memories/{id}` (a memory with its versions, conflicts and evidence),
//! `memledger://conflicts` (the pending queue, both sides whole) and `memledger://scopes/{scope}`
//! (a scope's current beliefs, newest first, a page at a time: `?offset=N`). Every read is a
//! store command run for the caller, so a resource shows exactly what `recall` would show it,
//! and a memory outside its grants is refused as `show` refuses it. What a read returns is
//! recorded data inside a fence ([`crate::fence`]), never instructions.

use memledger_engine::error::Exit;
use rmcp::ErrorData;
use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource, ResourceContents, ResourceTemplate,
};
use serde_json::{Value, json};

use super::session::Digest;
use crate::api::{self, BrowseQuery, Call};
use crate::{CallFn, Who};

const SCHEME: &str = "memledger://";
const CONFLICTS: &str = "memledger://conflicts";
const MEMORIES: &str = "memledger://memories/";
const SCOPES: &str = "memledger://scopes/";
/// Memories per page of `resources/list` and of a scope's resource.
pub const PAGE: usize = 50;
/// The media type of every resource: a notice line and the fenced data.
const MEDIA: &str = "text/plain";

/// What a resource URI names.
#[derive(Debug, PartialEq, Eq)]
pub enum Target {
    Conflicts,
    Memory(String),
    Scope { scope: String, offset: usize },
}

impl Target {
    pub fn parse(uri: &str) -> Result<Target, ErrorData> {
        let unknown = || {
            ErrorData::resource_not_found(
                format!(
                    "no such resource: {uri} (memledger://memories/ID, memledger://conflicts, memledger://scopes/SCOPE)"
                ),
                None,
            )
        };
        if uri == CONFLICTS {
            return Ok(Target::Conflicts);
        }
        if let Some(id) = uri.strip_prefix(MEMORIES) {
            if id.is_empty() || !id.chars().all(|c| c.is_ascii_hexdigit()) {
                return Err(unknown());
            }
            return Ok(Target::Memory(id.to_string()));
        }
        if let Some(rest) = uri.strip_prefix(SCOPES) {
            let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
            let scope = decode(path).ok_or_else(unknown)?;
            if scope.is_empty() {
                return Err(unknown());
            }
            let mut offset = 0;
            for pair in query.split('&').filter(|p| !p.is_empty()) {
                match pair.split_once('=') {
                    Some(("offset", n)) => offset = n.parse().map_err(|_| unknown())?,
                    _ => return Err(unknown()),
                }
            }
            return Ok(Target::Scope { scope, offset });
        }
        Err(unknown())
    }
}

/// A scope as a URI path segment: every byte outside the unreserved set and `:` percent-encoded.
pub fn encode(scope: &str) -> String {
    let mut out = String::with_capacity(scope.len());
    for b in scope.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b':') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn decode(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

pub fn scope_uri(scope: &str) -> String {
    format!("{SCOPES}{}", encode(scope))
}

/// A read that failed: the command's exit and its words.
pub struct Failure {
    pub exit: Exit,
    pub message: String,
}

impl From<Failure> for ErrorData {
    fn from(f: Failure) -> ErrorData {
        match f.exit {
            Exit::NotFound => ErrorData::resource_not_found(f.message, None),
            Exit::BadInput | Exit::NotPermitted => ErrorData::invalid_params(f.message, None),
            _ => ErrorData::internal_error(f.message, None),
        }
    }
}

/// The JSON document a store command printed for `who`, or why it printed none.
pub async fn document(call: &CallFn, command: Call, who: Who) -> Result<Value, Failure> {
    let reply = call(command, who).await;
    let exit = Exit::from_code(reply.exit_code);
    if exit != Exit::Ok {
        let message = reply.error.unwrap_or_else(|| "the command failed".into());
        return Err(Failure { exit, message });
    }
    serde_json::from_str(reply.stdout.trim())
        .map_err(|e| Failure { exit: Exit::Failure, message: format!("the command printed no JSON document: {e}") })
}

/// What `target` holds for `who`, as data (before the fence).
async fn data(call: &CallFn, target: &Target, who: Who) -> Result<Value, Failure> {
    match target {
        Target::Conflicts => {
            let q = api::ReviewConflictsQuery { status: "pending".into(), offset: 0, limit: PAGE };
            document(call, Call::ReviewConflicts(q), who).await
        }
        Target::Memory(id) => {
            let show = api::ShowQuery { id: id.clone(), as_of: None, valid_at: None };
            let memory = document(call, Call::Show(show.clone()), who.clone()).await?;
            let history = document(call, Call::History(show), who).await?;
            Ok(json!({ "memory": memory, "versions": history["versions"], "edges": history["edges"] }))
        }
        Target::Scope { scope, offset } => {
            let q = BrowseQuery { scope: Some(scope.clone()), offset: *offset, limit: PAGE };
            document(call, Call::Browse(q), who).await
        }
    }
}

/// How `uri` reads for `who` now: what a subscription compares (the fence's boundary, made
/// for each answer, is left out). A read that fails reads as its error.
pub async fn digest(call: &CallFn, uri: &str, who: Who) -> Digest {
    let bytes = match read_data(call, uri, who).await {
        Ok(value) => serde_json::to_vec(&value).unwrap_or_default(),
        Err(message) => format!("error: {message}").into_bytes(),
    };
    *blake3::hash(&bytes).as_bytes()
}

/// Whether `who` may read `uri` now, and it exists.
pub async fn readable(call: &CallFn, uri: &str, who: Who) -> bool {
    read_data(call, uri, who).await.is_ok()
}

async fn read_data(call: &CallFn, uri: &str, who: Who) -> Result<Value, String> {
    let target = Target::parse(uri).map_err(|e| e.message.to_string())?;
    data(call, &target, who).await.map_err(|f| f.message)
}

/// `resources/read`.
pub async fn read(call: &CallFn, uri: &str, who: Who) -> Result<ReadResourceResult, ErrorData> {
    let target = Target::parse(uri)?;
    let value = data(call, &target, who).await?;
    let text = match &target {
        Target::Scope { scope, .. } => scope_page(scope, &value),
        _ => {
            let pretty = serde_json::to_string_pretty(&value).unwrap_or_default();
            crate::fence::fence(&[(String::new(), pretty.as_str())])
        }
    };
    Ok(ReadResourceResult::new(vec![ResourceContents::text(text, uri).with_mime_type(MEDIA)]))
}

/// A scope's page: each memory's header and text inside the fence, then where the next page is.
fn scope_page(scope: &str, page: &Value) -> String {
    let memories = page["memories"].as_array().cloned().unwrap_or_default();
    let headers: Vec<String> = memories
        .iter()
        .map(|m| {
            format!(
                "[{MEMORIES}{}] {} v{} saved {}{}",
                m["memory_id"].as_str().unwrap_or_default(),
                m["type"].as_str().unwrap_or_default(),
                m["version"],
                m["asserted_at"].as_str().unwrap_or_default(),
                if m["conflicts_with"].as_array().is_some_and(|c| !c.is_empty()) {
                    " (in a pending conflict)"
                } else {
                    ""
                }
            )
        })
        .collect();
    let items: Vec<(String, &str)> =
        headers.into_iter().zip(memories.iter().map(|m| m["text"].as_str().unwrap_or_default())).collect();
    let mut out =
        if items.is_empty() { format!("No current memories in {scope} here.\n") } else { crate::fence::fence(&items) };
    if let Some(next) = page["next_offset"].as_u64() {
        out.push_str(&format!("More: {}?offset={next}\n", scope_uri(scope)));
    }
    out
}

/// `resources/list`: on the first page the conflict queue and each scope the caller may read
/// that holds memories; then its memories newest first, [`PAGE`] at a time. The cursor is the
/// offset of the next page's first memory.
pub async fn list(call: &CallFn, cursor: Option<&str>, who: Who) -> Result<ListResourcesResult, ErrorData> {
    let offset = match cursor {
        None => 0,
        Some(c) => {
            c.parse().map_err(|_| ErrorData::invalid_params(format!("not a cursor of this server: {c}"), None))?
        }
    };
    let page = document(call, Call::Browse(BrowseQuery { scope: None, offset, limit: PAGE }), who).await?;
    let mut resources = Vec::new();
    if offset == 0 {
        resources.push(
            Resource::new(CONFLICTS, "conflicts")
                .with_title("Pending conflicts")
                .with_description("The contradictions waiting for a person's decision, both sides whole.")
                .with_mime_type(MEDIA),
        );
        for s in page["scopes"].as_array().into_iter().flatten() {
            let scope = s["scope"].as_str().unwrap_or_default();
            resources.push(
                Resource::new(scope_uri(scope), format!("scope {scope}"))
                    .with_title(format!("Memories in {scope}"))
                    .with_description(format!("{} current memories, newest first, {PAGE} a page.", s["memories"]))
                    .with_mime_type(MEDIA),
            );
        }
    }
    for m in page["memories"].as_array().into_iter().flatten() {
        let id = m["memory_id"].as_str().unwrap_or_default();
        let text = m["text"].as_str().unwrap_or_default();
        let title: String = text.chars().take(80).collect();
        resources.push(
            Resource::new(format!("{MEMORIES}{id}"), format!("memory {}", &id[..id.len().min(12)]))
                .with_title(if title.len() < text.len() { format!("{title}…") } else { title })
                .with_description(format!(
                    "{} in {}, v{}, saved {}",
                    m["type"].as_str().unwrap_or_default(),
                    m["scope"].as_str().unwrap_or_default(),
                    m["version"],
                    m["asserted_at"].as_str().unwrap_or_default()
                ))
                .with_mime_type(MEDIA),
        );
    }
    let mut result = ListResourcesResult::with_all_items(resources);
    result.next_cursor = page["next_offset"].as_u64().map(|n| n.to_string());
    Ok(result)
}

/// `resources/templates/list`.
pub fn templates() -> ListResourceTemplatesResult {
    ListResourceTemplatesResult::with_all_items(vec![
        ResourceTemplate::new(format!("{MEMORIES}{{id}}"), "memory")
            .with_title("A memory")
            .with_description(
                "A memory (its id, or a unique prefix of 6+ hex digits) with every version, its conflicts and evidence.",
            )
            .with_mime_type(MEDIA),
        ResourceTemplate::new(format!("{SCOPES}{{scope}}"), "scope")
            .with_title("A scope's memories")
            .with_description(format!(
                "The current memories of a scope, newest first, {PAGE} a page (`?offset=N` for the next)."
            ))
            .with_mime_type(MEDIA),
    ])
}

/// Whether `uri` is one of this server's.
pub fn ours(uri: &str) -> bool {
    uri.starts_with(SCHEME)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_uri_reads_back_as_its_scope() {
        for scope in ["personal", "team:payments", "repo:memledger/web", "a b%c?d#e"] {
            let uri = scope_uri(scope);
            assert!(!uri[SCOPES.len()..].contains(['/', '?', '#', ' ']), "{uri}");
            assert_eq!(Target::parse(&uri).unwrap(), Target::Scope { scope: scope.into(), offset: 0 });
            let next = format!("{uri}?offset=50");
            assert_eq!(Target::parse(&next).unwrap(), Target::Scope { scope: scope.into(), offset: 50 });
        }
    }

    #[test]
    fn foreign_and_malformed_uris_are_not_found() {
        for uri in [
            "test://static-text",
            "memledger://memories/",
            "memledger://memories/xyz",
            "memledger://scopes/",
            "memledger://scopes/a?page=2",
            "memledger://scopes/%zz",
            "memledger://conflicts/1",
        ] {
            assert!(Target::parse(uri).is_err(), "{uri}");
        }
        assert_eq!(Target::parse(CONFLICTS).unwrap(), Target::Conflicts);
        assert_eq!(Target::parse("memledger://memories/0a1b2c").unwrap(), Target::Memory("0a1b2c".into()));
    }
}
