//! `memledger update`: an explicit edit, a new version unconditionally.

use memledger_engine::expiry::ExpiryChange;
use memledger_engine::resolve::UpdateResult;
use memledger_server::api::{Call, UpdateBody};

use super::Render;
use crate::app::Context;
use crate::output::{CliError, Output};

/// Edit a belief: the text becomes its next version. With --expect-version, only if the current
/// version is N (otherwise exit 3, nothing written). --expires-at, --ttl or --no-expiry change
/// its expiry (the text may then be left out: it stays); an update without them keeps it.
///
/// Example: memledger update 43c1a0 "the staging db runs on Postgres 17" --expect-version 2
/// Example: memledger update 43c1a0 --ttl 7d
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Any version's id (or a unique prefix of 6+ digits).
    pub id: String,
    /// The new text (`-` reads standard input); with an expiry flag, optional.
    #[arg(required_unless_present_any = ["expires_at", "ttl", "no_expiry"])]
    pub text: Option<String>,
    #[arg(long, value_name = "N")]
    pub expect_version: Option<u32>,
    /// When it stops being true (RFC 3339).
    #[arg(long, value_name = "RFC3339")]
    pub expires_at: Option<String>,
    /// How long it stays true from now: 30m, 12h, 14d, 2w.
    #[arg(long, value_name = "DURATION")]
    pub ttl: Option<String>,
    /// It no longer expires.
    #[arg(long, conflicts_with_all = ["expires_at", "ttl"])]
    pub no_expiry: bool,
}

pub fn run(ctx: &Context, args: Args, out: &mut Output) -> Result<(), CliError> {
    let text = args.text.as_deref().map(super::text_arg).transpose()?;
    if let Some(text) = &text {
        memledger_engine::input::validate_text(text)?;
    }
    let body = UpdateBody {
        id: args.id,
        text,
        expect_version: args.expect_version,
        expires_at: args.expires_at,
        ttl: args.ttl,
        no_expiry: args.no_expiry,
    };
    // A malformed expiry is refused before the store is opened.
    ExpiryChange::of(
        body.expires_at.as_deref(),
        body.ttl.as_deref(),
        body.no_expiry,
        memledger_schemas::Timestamp::now(),
    )?;
    ctx.run(Call::Update(body), out)
}

impl Render for UpdateResult {
    fn render(&self, out: &mut Output, _: &str) -> Result<(), CliError> {
        out.line(format!(
            "versioned  {}  v{} (replaces {})",
            self.memory_id.short(),
            self.version,
            self.replaces.short()
        ))
    }
}
