//! The commands on principals (who acts, with which grants) and the transcript importer's two
//! calls (where a file's import stands; one chunk's memories and the progress that commits it).

use memledger_engine::access::{check_name, check_pattern, grant_text, parse_grant};
use memledger_engine::principals::PrincipalChange;
use memledger_engine::transcripts::{self, Agent};
use memledger_engine::{Caller, Durability, Memledger, SaveRequest};
use memledger_schemas::{Grant, Hash, PrincipalKind};

use crate::answer::{ChunkDoc, ChunkSave, PrincipalsDoc, ProgressDoc, WhoamiDoc};
use crate::error::CommandError;
use crate::request::{
    NameBody, PrincipalAddBody, PrincipalGrantBody, PrincipalRevokeBody, TranscriptChunkBody, TranscriptQuery,
};

/// Grants as `SCOPE=VERB,…[@AUTHORITY]`, refused when malformed.
pub fn parse_grants(grants: &[String]) -> Result<Vec<Grant>, CommandError> {
    grants.iter().map(|g| parse_grant(g).map_err(CommandError::bad_input)).collect()
}

/// A principal to add: its kind and grants, refused when malformed.
pub fn check_add(body: &PrincipalAddBody) -> Result<(PrincipalKind, Vec<Grant>), CommandError> {
    let kind = body.kind.parse::<PrincipalKind>().map_err(CommandError::bad_input)?;
    check_name(&body.name).map_err(CommandError::bad_input)?;
    Ok((kind, parse_grants(&body.grants)?))
}

pub fn add(ml: &Memledger, caller: &Caller, b: &PrincipalAddBody) -> Result<PrincipalChange, CommandError> {
    let (kind, grants) = check_add(b)?;
    Ok(ml.principals_add(caller, &b.name, kind, grants)?)
}

pub fn grant(ml: &Memledger, caller: &Caller, b: &PrincipalGrantBody) -> Result<PrincipalChange, CommandError> {
    Ok(ml.principals_grant(caller, &b.name, parse_grants(&b.grants)?)?)
}

pub fn revoke(ml: &Memledger, caller: &Caller, b: &PrincipalRevokeBody) -> Result<PrincipalChange, CommandError> {
    for pattern in &b.grants {
        check_pattern(pattern).map_err(CommandError::bad_input)?;
    }
    Ok(ml.principals_revoke(caller, &b.name, b.grants.clone(), b.reason.clone())?)
}

pub fn rotate(ml: &Memledger, caller: &Caller, b: &NameBody) -> Result<PrincipalChange, CommandError> {
    Ok(ml.principals_rotate(caller, &b.name)?)
}

pub fn list(ml: &Memledger, caller: &Caller) -> Result<PrincipalsDoc, CommandError> {
    Ok(PrincipalsDoc { principals: ml.principals(caller)? })
}

pub fn whoami(caller: &Caller) -> WhoamiDoc {
    let p = &caller.principal;
    WhoamiDoc {
        principal: p.name.clone(),
        kind: p.kind,
        own_scope: p.own_scope(),
        grants: p.grants.iter().map(grant_text).collect(),
        owner: p.owner,
        actor: caller.actor.clone(),
    }
}

/// Where a transcript file's import stands.
pub fn transcript_progress(ml: &Memledger, caller: &Caller, q: &TranscriptQuery) -> Result<ProgressDoc, CommandError> {
    let scope = q.scope.clone().unwrap_or_else(|| caller.principal.own_scope());
    let (progress, chunks) = ml.transcript_progress(caller, &scope, &q.file, q.identity.as_deref())?;
    Ok(ProgressDoc { progress, chunks })
}

fn hash_field(name: &str, text: &str) -> Result<Hash, CommandError> {
    Hash::parse_hex(text).ok_or_else(|| CommandError::bad_input(format!("progress.{name}: not 64 hex digits")))
}

/// One chunk of a transcript: its saves (made durable together), then its progress event.
pub fn transcript_chunk(ml: &Memledger, caller: &Caller, b: &TranscriptChunkBody) -> Result<ChunkDoc, CommandError> {
    let scope = b.scope.clone().unwrap_or_else(|| caller.principal.own_scope());
    let progress = match &b.progress {
        None => None,
        Some(p) => {
            let agent: Agent = p.agent.parse().map_err(CommandError::bad_input)?;
            if p.file.trim().is_empty() {
                return Err(CommandError::bad_input("progress.file: empty"));
            }
            if p.first_line == 0 || p.last_line < p.first_line {
                return Err(CommandError::bad_input(
                    "progress: lines count from 1 and the last is not before the first",
                ));
            }
            Some(memledger_schemas::TranscriptProgressed {
                agent: agent.to_string(),
                file: p.file.clone(),
                session: p.session.clone(),
                offset: p.offset,
                prefix_hash: hash_field("prefix_hash", &p.prefix_hash)?,
                chunk_hash: hash_field("chunk_hash", &p.chunk_hash)?,
                first_line: p.first_line,
                last_line: p.last_line,
                memories: Vec::new(),
            })
        }
    };
    let mut results = Vec::with_capacity(b.saves.len());
    let mut memories = Vec::new();
    // What the saves cost, for the importer's budget (counted for the caller by `execute`).
    let (saved, usage) = memledger_engine::models::metered(|| -> Result<(), CommandError> {
        for (index, save) in b.saves.iter().enumerate() {
            match ml.save_by_with(SaveRequest::from(save), caller, Durability::Deferred) {
                Ok(r) => {
                    memories.push(r.memory_id);
                    results.push(ChunkSave::Saved(Box::new(r)));
                }
                Err(e) if crate::memories::refuses_line(&e) => {
                    results.push(ChunkSave::Refused { index, error: e.to_string() })
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    });
    saved?;
    ml.sync()?;
    let (mut progress_seqs, mut progress_replayed) = (Vec::new(), false);
    if let Some(mut progress) = progress {
        progress.memories = memories;
        let key = transcripts::progress_key(&progress);
        (progress_seqs, progress_replayed) = ml.record_transcript_progress(caller, &scope, progress, key)?;
    }
    // What distilling the chunk cost the importing process, counted once the chunk is in (a
    // chunk replayed was counted when it was first committed).
    if let Some(u) = b.usage
        && !progress_replayed
    {
        ml.record_usage(&caller.principal.name, memledger_engine::models::TokenUsage::from(u))?;
    }
    Ok(ChunkDoc { results, progress_seqs, progress_replayed, usage })
}
