//! Who may do what (docs/design.md §13, docs/adr/0029-principals-and-authority.md): a
//! principal's grants name scope patterns, verbs and the highest authority it may claim there.
//! Every command of the engine is checked against its caller's [`Access`] before it reads or
//! writes anything; a refusal is [`NotPermitted`], naming the verb and the scope, and nothing is
//! written. The store's owner (direct access to the store directory, the store's own token) may
//! do everything.
//!
//! Tokens: `mlt_` and 43 characters of base64url, 256 random bits. Only a keyed hash of a token
//! (its verifier: blake3 keyed with the store's verifier secret, which the ledger keeps out of
//! its events) is ever stored, and a token is never printed after it was made, logged, or put in
//! an error.

use std::sync::Arc;

use memledger_projector::beliefs::MemoryRecord;
use memledger_projector::conflicts::ConflictRecord;
use memledger_schemas::{Authority, ConflictKind, Grant, Hash, PrincipalKind, Verb};

pub use memledger_schemas::OWNER;

/// What a token starts with.
pub const TOKEN_PREFIX: &str = "mlt_";

/// The longest principal name.
pub const MAX_NAME: usize = 64;

/// A principal as a command sees it: its name, kind and grants.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Principal {
    pub name: String,
    pub kind: PrincipalKind,
    pub grants: Vec<Grant>,
    /// The store's owner: every verb in every scope, up to `policy`.
    pub owner: bool,
}

impl Principal {
    /// The store's owner.
    pub fn owner() -> Principal {
        Principal { name: OWNER.into(), kind: PrincipalKind::Person, grants: Vec::new(), owner: true }
    }

    /// The scope a principal's own memories go to when a request names none: `person:NAME`,
    /// `agent:NAME` or `service:NAME`. The owner's is `personal`, the store's default.
    pub fn own_scope(&self) -> String {
        if self.owner { "personal".into() } else { format!("{}:{}", self.kind, self.name) }
    }
}

/// Who asks: the authenticated principal, and whom it acts for (`--actor`, free text, recorded
/// beside it on every event).
#[derive(Clone, Debug)]
pub struct Caller {
    pub principal: Arc<Principal>,
    pub actor: String,
}

impl Caller {
    /// The store's owner acting as `actor`: every command run on a store this process opened.
    pub fn owner(actor: impl Into<String>) -> Caller {
        Caller { principal: Arc::new(Principal::owner()), actor: actor.into() }
    }

    pub fn access(&self) -> Access<'_> {
        Access(&self.principal)
    }

    pub fn name(&self) -> &str {
        &self.principal.name
    }
}

/// A refusal: the caller may not do `verb` in `scope`. Nothing was written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{principal} may not {verb} in {scope}{detail}")]
pub struct NotPermitted {
    pub principal: String,
    pub verb: Verb,
    pub scope: String,
    /// More about why (", which needs authority policy"), starting with its separator.
    pub detail: String,
}

/// A principal's grants, asked.
#[derive(Clone, Copy)]
pub struct Access<'a>(pub &'a Principal);

/// Whether a grant's pattern covers `scope`: the scope itself, a prefix ending in `*`
/// (`project:*` covers `project:memledger`), or `*`.
pub fn pattern_covers(pattern: &str, scope: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => scope.starts_with(prefix),
        None => pattern == scope,
    }
}

/// Whether every scope `inner` covers, `outer` covers too.
pub fn pattern_within(inner: &str, outer: &str) -> bool {
    match (inner.strip_suffix('*'), outer.strip_suffix('*')) {
        (_, None) => inner == outer,
        (Some(inner), Some(outer)) => inner.starts_with(outer),
        (None, Some(outer)) => inner.starts_with(outer),
    }
}

impl Access<'_> {
    pub fn principal(&self) -> &Principal {
        self.0
    }

    /// The grants that cover `scope`, with the implicit one on the principal's own scope
    /// (read, propose, write, resolve and erase there, at its kind's authority).
    fn grants_for<'g>(&'g self, scope: &'g str) -> impl Iterator<Item = (&'g [Verb], Option<Authority>)> + 'g {
        let own = (scope == self.0.own_scope()).then_some((OWN_VERBS, None));
        own.into_iter().chain(
            self.0
                .grants
                .iter()
                .filter(move |g| pattern_covers(&g.pattern, scope))
                .map(|g| (g.verbs.as_slice(), g.authority)),
        )
    }

    /// Whether the principal may `verb` in `scope`.
    pub fn can(&self, verb: Verb, scope: &str) -> bool {
        self.0.owner || self.grants_for(scope).any(|(verbs, _)| verbs.contains(&verb))
    }

    /// [`Access::can`] as a result.
    pub fn require(&self, verb: Verb, scope: &str) -> Result<(), NotPermitted> {
        if self.can(verb, scope) { Ok(()) } else { Err(self.refusal(verb, scope, String::new())) }
    }

    /// A refusal of `verb` in `scope`, with more said in `detail`.
    pub fn refusal(&self, verb: Verb, scope: &str, detail: String) -> NotPermitted {
        NotPermitted { principal: self.0.name.clone(), verb, scope: scope.into(), detail }
    }

    /// Whether the principal may read `scope`.
    pub fn reads(&self, scope: &str) -> bool {
        self.can(Verb::Read, scope)
    }

    /// The scopes it may read, for a search over several.
    pub fn readable(&self) -> Readable {
        if self.reads_everything() {
            return Readable { all: true, patterns: Vec::new() };
        }
        let mut patterns = vec![self.0.own_scope()];
        for g in self.0.grants.iter().filter(|g| g.verbs.contains(&Verb::Read)) {
            if !patterns.contains(&g.pattern) {
                patterns.push(g.pattern.clone());
            }
        }
        Readable { all: false, patterns }
    }

    /// The scopes a read names (`scope`, checked: it must be readable; one ending in `*` names
    /// every scope it prefixes) or, when it names none, every scope it may read.
    pub fn scopes_for(&self, scope: Option<&str>) -> Result<Readable, NotPermitted> {
        match scope {
            Some(s) => {
                self.require(Verb::Read, s)?;
                Ok(Readable { all: false, patterns: vec![s.to_string()] })
            }
            None => Ok(self.readable()),
        }
    }

    /// Whether it may read every scope (the owner, or a grant of read on `*`): reads need no
    /// filter then.
    pub fn reads_everything(&self) -> bool {
        self.0.owner || self.0.grants.iter().any(|g| g.pattern == "*" && g.verbs.contains(&Verb::Read))
    }

    /// The highest authority it may claim in `scope`: the highest of the grants there that
    /// give `propose` or `write` (a grant without one: its kind's default); the owner `policy`.
    pub fn authority_cap(&self, scope: &str) -> Option<Authority> {
        if self.0.owner {
            return Some(Authority::Policy);
        }
        let default = self.0.kind.default_authority();
        self.grants_for(scope)
            .filter(|(verbs, _)| verbs.iter().any(|v| matches!(v, Verb::Write | Verb::Propose | Verb::Resolve)))
            .map(|(_, cap)| cap.unwrap_or(default))
            .max()
    }

    /// The highest authority it may claim everywhere in `pattern`: of its grants covering all of
    /// it that give `propose`, `write` or `resolve`.
    pub fn authority_cap_within(&self, pattern: &str) -> Option<Authority> {
        if self.0.owner {
            return Some(Authority::Policy);
        }
        let default = self.0.kind.default_authority();
        self.0
            .grants
            .iter()
            .filter(|g| pattern_within(pattern, &g.pattern))
            .filter(|g| g.verbs.iter().any(|v| matches!(v, Verb::Write | Verb::Propose | Verb::Resolve)))
            .map(|g| g.authority.unwrap_or(default))
            .max()
    }

    /// The authority a save claims in `scope` when it names none: its kind's default, at most
    /// its cap (the owner: `stated`).
    pub fn default_authority(&self, scope: &str) -> Authority {
        let default = if self.0.owner { Authority::Stated } else { self.0.kind.default_authority() };
        self.authority_cap(scope).map_or(default, |cap| default.min(cap))
    }

    /// Whether it may administer the store (manage principals, rebuild, import): `admin` on `*`.
    pub fn administers_store(&self) -> bool {
        self.0.owner || self.0.grants.iter().any(|g| g.pattern == "*" && g.verbs.contains(&Verb::Admin))
    }

    /// Whether it may grant and revoke within `pattern`: `admin` on a pattern covering it.
    pub fn administers(&self, pattern: &str) -> bool {
        self.0.owner
            || self.0.grants.iter().any(|g| g.verbs.contains(&Verb::Admin) && pattern_within(pattern, &g.pattern))
    }
}

/// How a save by this caller may act ([`crate::pipeline::Stance`]): the authority it claims
/// (at most its cap in the scope; none claimed: its default), and whether it may only propose.
/// A caller that may neither write nor propose in the scope, or claims more than its cap, is
/// refused.
pub(crate) fn stance_of(
    access: Access<'_>,
    save: &crate::input::ValidSave,
) -> Result<crate::pipeline::Stance, NotPermitted> {
    let scope = save.scope.as_str();
    let writes = access.can(Verb::Write, scope);
    if !writes && !access.can(Verb::Propose, scope) {
        return Err(access.refusal(Verb::Write, scope, " (nor propose there)".into()));
    }
    let authority = save.authority.unwrap_or_else(|| access.default_authority(scope));
    let cap = access.authority_cap(scope).unwrap_or_else(|| access.default_authority(scope));
    if authority > cap {
        return Err(access.refusal(
            Verb::Write,
            scope,
            format!(" as {authority}: its grant there lets it claim at most {cap}"),
        ));
    }
    Ok(crate::pipeline::Stance { authority, propose: !writes })
}

/// Whether the caller may act with `verb` on `record` in a way that supersedes it (an edit, a
/// retirement): `verb` in its scope and at least its authority there. The authority the new
/// version carries: the higher of the belief's and the caller's default.
pub(crate) fn supersede(access: Access<'_>, verb: Verb, record: &MemoryRecord) -> Result<Authority, NotPermitted> {
    let scope = record.scope.as_str();
    access.require(verb, scope)?;
    let cap = access.authority_cap(scope).unwrap_or_else(|| access.default_authority(scope));
    if cap < record.authority {
        return Err(access.refusal(
            verb,
            scope,
            format!(" over a {} belief: its grant there reaches {cap}", record.authority),
        ));
    }
    Ok(record.authority.max(access.default_authority(scope)))
}

/// Whether the caller may settle `conflict` (resolve it, revert its resolution; accept or reject
/// a proposal): `resolve` (for a proposal, `write`) in the scope of every side, and at least the
/// authority the conflict needs in each. The authority its decision carries (a merged text's).
pub(crate) fn settle(
    access: Access<'_>,
    reader: crate::reads::Reader<'_>,
    conflict: &ConflictRecord,
) -> Result<Authority, crate::error::EngineError> {
    let verb = if conflict.opened_as == ConflictKind::Proposal { Verb::Write } else { Verb::Resolve };
    let needs = conflict.needs_authority;
    let mut scopes: Vec<String> = Vec::new();
    for id in std::iter::once(conflict.incoming).chain(conflict.candidates.iter().map(|c| c.memory_id)) {
        let scope = reader.record(id)?.scope;
        if !scopes.contains(&scope) {
            scopes.push(scope);
        }
    }
    for scope in &scopes {
        access.require(verb, scope)?;
        let cap = access.authority_cap(scope).unwrap_or_else(|| access.default_authority(scope));
        if cap < needs {
            return Err(access
                .refusal(
                    verb,
                    scope,
                    format!(": the conflict needs {needs} authority, and its grant there reaches {cap}"),
                )
                .into());
        }
    }
    let default = scopes.first().map_or(Authority::Stated, |s| access.default_authority(s));
    Ok(needs.max(default))
}

/// The scopes a principal may read: all of them, or those its patterns cover.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Readable {
    all: bool,
    patterns: Vec<String>,
}

impl Readable {
    /// Every scope.
    pub fn everything() -> Readable {
        Readable { all: true, patterns: Vec::new() }
    }

    /// The scopes `pattern` covers (one scope, or a prefix ending in `*`).
    pub fn only(pattern: &str) -> Readable {
        Readable { all: false, patterns: vec![pattern.to_string()] }
    }

    /// As the text index's filter.
    pub fn scopes(&self) -> memledger_projector::text_index::Scopes<'_> {
        use memledger_projector::text_index::Scopes;
        match (self.all, self.patterns.as_slice()) {
            (true, _) => Scopes::All,
            (false, [one]) if !one.ends_with('*') => Scopes::One(one),
            (false, patterns) => Scopes::Patterns(patterns),
        }
    }

    pub fn covers(&self, scope: &str) -> bool {
        self.all || self.patterns.iter().any(|p| pattern_covers(p, scope))
    }
}

/// What a principal may do in its own scope without a grant.
const OWN_VERBS: &[Verb] = &[Verb::Read, Verb::Propose, Verb::Write, Verb::Resolve, Verb::Erase];

/// A new token: [`TOKEN_PREFIX`] and 256 random bits in base64url.
pub fn new_token() -> String {
    use base64::Engine;
    let bytes: [u8; 32] = rand::random();
    format!("{TOKEN_PREFIX}{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// The verifier of `token` under the store's verifier secret: what the ledger keeps.
pub fn verifier(secret: &[u8; 32], token: &str) -> Hash {
    Hash(*blake3::keyed_hash(secret, token.as_bytes()).as_bytes())
}

/// Two verifiers compared in constant time.
pub fn same_verifier(a: &Hash, b: &Hash) -> bool {
    a.0.iter().zip(&b.0).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A principal's name, checked: 1 to [`MAX_NAME`] of lowercase letters, digits, `.`, `_`, `-`,
/// starting with a letter or digit; `owner` is the store's.
pub fn check_name(name: &str) -> Result<(), String> {
    let ok_char = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-');
    let first_ok = name.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    if name.is_empty() || name.len() > MAX_NAME || !first_ok || !name.chars().all(ok_char) {
        return Err(format!(
            "principal name {name:?}: 1 to {MAX_NAME} lowercase letters, digits, '.', '_' or '-', starting with a letter or digit"
        ));
    }
    if name == OWNER {
        return Err(format!("{OWNER:?} is the store's owner, not a principal one can add"));
    }
    Ok(())
}

/// A grant written `SCOPE=VERB,VERB…[@AUTHORITY]` (`team:billing=read,write,resolve@policy`).
pub fn parse_grant(text: &str) -> Result<Grant, String> {
    let usage = || format!("grant {text:?}: write SCOPE=VERB,VERB…[@AUTHORITY], e.g. 'team:billing=read,write@stated'");
    let (pattern, rest) = text.split_once('=').ok_or_else(usage)?;
    let pattern = pattern.trim();
    let (verbs, authority) = match rest.split_once('@') {
        Some((verbs, authority)) => (verbs, Some(authority.trim().parse::<Authority>()?)),
        None => (rest, None),
    };
    check_pattern(pattern)?;
    let mut parsed: Vec<Verb> = Vec::new();
    for verb in verbs.split(',').map(str::trim).filter(|v| !v.is_empty()) {
        let verb = verb.parse::<Verb>()?;
        if !parsed.contains(&verb) {
            parsed.push(verb);
        }
    }
    if parsed.is_empty() {
        return Err(usage());
    }
    parsed.sort();
    Ok(Grant { pattern: pattern.into(), verbs: parsed, authority })
}

/// A scope pattern, checked: a scope, a prefix ending in `*`, or `*`; no whitespace or control
/// characters, at most 1 KiB.
pub fn check_pattern(pattern: &str) -> Result<(), String> {
    let bad = pattern.is_empty()
        || pattern.len() > 1024
        || pattern.chars().any(|c| c.is_whitespace() || c.is_control())
        || pattern.trim_end_matches('*').contains('*');
    if bad {
        return Err(format!(
            "scope pattern {pattern:?}: a scope (team:payments), a prefix ending in * (project:*), or *"
        ));
    }
    Ok(())
}

/// A grant as it is written.
pub fn grant_text(grant: &Grant) -> String {
    let verbs: Vec<&str> = grant.verbs.iter().map(|v| v.as_str()).collect();
    match grant.authority {
        Some(a) => format!("{}={}@{a}", grant.pattern, verbs.join(",")),
        None => format!("{}={}", grant.pattern, verbs.join(",")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agent(grants: &[&str]) -> Principal {
        Principal {
            name: "bot".into(),
            kind: PrincipalKind::Agent,
            grants: grants.iter().map(|g| parse_grant(g).unwrap()).collect(),
            owner: false,
        }
    }

    #[test]
    fn patterns_cover_a_scope_a_prefix_or_everything() {
        assert!(pattern_covers("team:payments", "team:payments"));
        assert!(!pattern_covers("team:payments", "team:payments-eu"));
        assert!(pattern_covers("project:*", "project:memledger"));
        assert!(!pattern_covers("project:*", "person:alice"));
        assert!(pattern_covers("*", "anything"));
        assert!(pattern_within("project:a", "project:*"));
        assert!(pattern_within("project:a*", "project:*"));
        assert!(!pattern_within("project:*", "project:a"));
        assert!(!pattern_within("*", "project:*"));
    }

    #[test]
    fn grants_give_verbs_and_cap_authority_per_scope() {
        let p = agent(&["team:billing=read,write,resolve@policy", "project:*=read"]);
        let a = Access(&p);
        assert!(a.can(Verb::Write, "team:billing") && a.can(Verb::Read, "project:x"));
        assert!(!a.can(Verb::Write, "project:x") && !a.can(Verb::Read, "person:alice"));
        assert_eq!(a.authority_cap("team:billing"), Some(Authority::Policy));
        // An agent claims inferred unless it says more.
        assert_eq!(a.default_authority("team:billing"), Authority::Inferred);
        assert_eq!(a.authority_cap("project:x"), None);
        // Its own scope without a grant.
        assert!(a.can(Verb::Write, "agent:bot") && !a.can(Verb::Admin, "agent:bot"));
        assert_eq!(a.authority_cap("agent:bot"), Some(Authority::Inferred));
        let owner = Principal::owner();
        assert!(Access(&owner).can(Verb::Erase, "anything") && Access(&owner).reads_everything());
    }

    #[test]
    fn grants_are_parsed_and_written_back() {
        let g = parse_grant("team:billing=write,read,write@policy").unwrap();
        assert_eq!(g.verbs, vec![Verb::Read, Verb::Write]);
        assert_eq!(grant_text(&g), "team:billing=read,write@policy");
        for bad in ["team:billing", "=read", "team:billing=", "team:billing=fly", "a*b=read", "x=read@boss", "a b=read"]
        {
            assert!(parse_grant(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn tokens_are_long_and_only_their_verifier_is_kept() {
        let (a, b) = (new_token(), new_token());
        assert_ne!(a, b);
        assert!(a.starts_with(TOKEN_PREFIX) && a.len() == TOKEN_PREFIX.len() + 43, "{a}");
        let secret = [7u8; 32];
        assert!(same_verifier(&verifier(&secret, &a), &verifier(&secret, &a)));
        assert!(!same_verifier(&verifier(&secret, &a), &verifier(&secret, &b)));
        assert!(!same_verifier(&verifier(&secret, &a), &verifier(&[8u8; 32], &a)));
    }

    #[test]
    fn names_are_checked() {
        for good in ["alice", "ci-bot", "a.b_c", "7"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in ["", "Alice", "-x", "a b", "owner", &"x".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }
}
