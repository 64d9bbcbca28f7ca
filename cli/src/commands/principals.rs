//! `memledger principals` and `memledger whoami`: who may act on the store besides its owner,
//! with what grants, and their tokens (docs/principals.md). A token is printed once, by the
//! command that made it (`add`, `rotate`), and never again.

use memledger_commands::answer::{PrincipalsDoc, WhoamiDoc};
use memledger_engine::principals::{PrincipalChange, PrincipalView};
use memledger_server::api::{Call, Empty, NameBody, PrincipalAddBody, PrincipalGrantBody, PrincipalRevokeBody};

use super::Render;
use crate::app::Context;
use crate::output::{CliError, Output};

#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Add a principal and print its token, once.
    ///
    /// Each --grant is SCOPE=VERB,VERB…[@AUTHORITY]: a scope (team:payments), a prefix of scopes
    /// (project:*) or every scope (*); verbs read, propose, write, resolve, erase, admin; the
    /// highest authority it may claim there (inferred, imported, stated, policy; default: its
    /// kind's: person stated, agent inferred, service imported). Its own scope (KIND:NAME) it may
    /// read, propose, write, resolve and erase in without a grant.
    ///
    /// Example: memledger principals add billing-bot --kind agent --grant 'team:billing=read,propose'
    Add(AddArgs),
    /// List the principals (never their tokens).
    List(ListArgs),
    /// Give a principal grants; each replaces its grant of the same scope pattern.
    ///
    /// Example: memledger principals grant ana --grant 'team:billing=read,write,resolve@policy'
    Grant(GrantArgs),
    /// Take back a principal's grants of some scope patterns, or (none named) revoke the
    /// principal: its token stops working at once, and its name is never reused.
    ///
    /// Example: memledger principals revoke billing-bot --reason "token leaked"
    Revoke(RevokeArgs),
    /// Replace a principal's token and print the new one, once; the old one stops working.
    Rotate(RotateArgs),
}

#[derive(clap::Args, Debug)]
pub struct AddArgs {
    /// Lowercase letters, digits, `.`, `_` and `-`.
    pub name: String,
    /// person, agent or service.
    #[arg(long)]
    pub kind: String,
    /// SCOPE=VERB,VERB…[@AUTHORITY], as many as needed.
    #[arg(long = "grant", value_name = "GRANT")]
    pub grants: Vec<String>,
}

#[derive(clap::Args, Debug)]
pub struct ListArgs {}

#[derive(clap::Args, Debug)]
pub struct GrantArgs {
    pub name: String,
    /// SCOPE=VERB,VERB…[@AUTHORITY], at least one.
    #[arg(long = "grant", value_name = "GRANT", required = true)]
    pub grants: Vec<String>,
}

#[derive(clap::Args, Debug)]
pub struct RevokeArgs {
    pub name: String,
    /// Only the grant of this scope pattern (as many as needed); without any, the principal.
    #[arg(long = "grant", value_name = "PATTERN")]
    pub grants: Vec<String>,
    /// Why (recorded with a revocation of the principal).
    #[arg(long)]
    pub reason: Option<String>,
}

#[derive(clap::Args, Debug)]
pub struct RotateArgs {
    pub name: String,
}

/// Say who this command acts as: the principal its token authenticates (or the store's owner),
/// its kind, own scope and grants.
#[derive(clap::Args, Debug)]
pub struct WhoamiArgs {}

pub fn run(ctx: &Context, command: Command, out: &mut Output) -> Result<(), CliError> {
    let call = match command {
        Command::Add(a) => {
            let body = PrincipalAddBody { name: a.name, kind: a.kind, grants: a.grants };
            memledger_commands::principals::check_add(&body)?;
            Call::PrincipalsAdd(body)
        }
        Command::List(_) => Call::PrincipalsList(Empty {}),
        Command::Grant(a) => {
            let body = PrincipalGrantBody { name: a.name, grants: a.grants };
            memledger_commands::principals::parse_grants(&body.grants)?;
            Call::PrincipalsGrant(body)
        }
        Command::Revoke(a) => {
            Call::PrincipalsRevoke(PrincipalRevokeBody { name: a.name, grants: a.grants, reason: a.reason })
        }
        Command::Rotate(a) => Call::PrincipalsRotate(NameBody { name: a.name }),
    };
    ctx.run(call, out)
}

pub fn whoami(ctx: &Context, _args: WhoamiArgs, out: &mut Output) -> Result<(), CliError> {
    ctx.run(Call::Whoami(Empty {}), out)
}

/// A principal added, granted, revoked or rotated (the same document answers each).
impl Render for PrincipalChange {
    fn render(&self, out: &mut Output, command: &str) -> Result<(), CliError> {
        let verb = match command {
            "principals_add" => "added",
            "principals_grant" => "granted",
            "principals_revoke" if self.principal.revoked => "revoked",
            "principals_revoke" => "took back grants of",
            "principals_rotate" => "rotated the token of",
            _ => "changed",
        };
        let p = &self.principal;
        out.line(format!("{verb} {} ({})", p.principal, p.kind))?;
        print_grants(out, p)?;
        if let Some(token) = &self.token {
            out.line(format!("token: {token}"))?;
            out.note(
                "memledger: the token is shown this once: keep it where the principal reads it (MEMLEDGER_TOKEN, an \
                 Authorization: Bearer header); `memledger principals rotate` makes a new one",
            );
        }
        Ok(())
    }
}

fn print_grants(out: &mut Output, p: &PrincipalView) -> Result<(), CliError> {
    out.line(format!("  own scope {}", p.own_scope))?;
    for g in &p.grants {
        out.line(format!("  grant {g}"))?;
    }
    if p.grants.is_empty() {
        out.line("  no grants beyond its own scope")?;
    }
    Ok(())
}

impl Render for PrincipalsDoc {
    fn render(&self, out: &mut Output, _: &str) -> Result<(), CliError> {
        if self.principals.is_empty() {
            out.line("no principals: only the store's owner acts on it (`memledger principals add NAME --kind KIND`)")?;
        }
        for p in &self.principals {
            let state = if p.revoked { "  (revoked)" } else { "" };
            out.line(format!(
                "{} ({}){state}  added {} by {}",
                p.principal,
                p.kind,
                p.added_at.to_human(),
                p.added_by
            ))?;
            print_grants(out, p)?;
        }
        Ok(())
    }
}

impl Render for WhoamiDoc {
    fn render(&self, out: &mut Output, _: &str) -> Result<(), CliError> {
        if self.owner {
            return out.line(format!("owner: the store's owner, every verb in every scope (acting as {})", self.actor));
        }
        out.line(format!("{} ({}), acting as {}", self.principal, self.kind, self.actor))?;
        out.line(format!("  own scope {}", self.own_scope))?;
        for g in &self.grants {
            out.line(format!("  grant {g}"))?;
        }
        Ok(())
    }
}
