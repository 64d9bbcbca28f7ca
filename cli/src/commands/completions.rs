//! `memledger completions SHELL` and `memledger man`: generated from the clap definitions, so
//! they never drift from the commands.

use clap::CommandFactory;

use crate::app::{Cli, Context};
use crate::output::{CliError, Output};

/// Print a shell completion script.
///
/// Example: memledger completions bash > ~/.local/share/bash-completion/completions/memledger
///
/// zsh: memledger completions zsh > "${fpath[1]}/_memledger"; fish: memledger completions fish >
/// ~/.config/fish/completions/memledger.fish
#[derive(clap::Args, Debug)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell.
    pub shell: clap_complete::Shell,
}

/// Print the man page (roff), or write one page per command into a directory.
///
/// Example: memledger man --out-dir ~/.local/share/man/man1 && man memledger-save
#[derive(clap::Args, Debug)]
pub struct ManArgs {
    /// Write memledger.1 and memledger-COMMAND.1 here instead of printing memledger.1.
    #[arg(long, value_name = "DIR")]
    pub out_dir: Option<std::path::PathBuf>,
}

pub fn completions(_ctx: &Context, args: CompletionsArgs, out: &mut Output) -> Result<(), CliError> {
    let mut command = Cli::command();
    // Into a buffer first: clap_complete panics on a write error (a closed pipe).
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "memledger", &mut script);
    out.writer().write_all(&script)?;
    Ok(())
}

pub fn man(_ctx: &Context, args: ManArgs, out: &mut Output) -> Result<(), CliError> {
    let command = Cli::command();
    let Some(dir) = args.out_dir else {
        clap_mangen::Man::new(command).render(out.writer())?;
        return Ok(());
    };
    std::fs::create_dir_all(&dir)?;
    let mut pages = vec![("memledger".to_string(), command.clone())];
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = format!("memledger-{}", sub.get_name());
        let display = format!("memledger {}", sub.get_name());
        // clap names are `&'static str` (no "string" feature): leak a few bytes in a one-shot command.
        let page_name: &'static str = Box::leak(name.clone().into_boxed_str());
        pages.push((name, sub.clone().name(page_name).display_name(display)));
    }
    for (name, page) in pages {
        let path = dir.join(format!("{name}.1"));
        let mut bytes = Vec::new();
        clap_mangen::Man::new(page).render(&mut bytes)?;
        std::fs::write(&path, bytes)?;
        if !out.json {
            out.line(format!("wrote {}", path.display()))?;
        }
    }
    Ok(())
}
