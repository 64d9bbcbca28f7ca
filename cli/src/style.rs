//! Colours and progress for people: on a terminal only, never when piped, never with `NO_COLOR`
//! (https://no-color.org) or `TERM=dumb`; `CLICOLOR_FORCE=1` forces colours.

use std::io::IsTerminal;
use std::sync::OnceLock;

use anstyle::{AnsiColor, Effects, Style};

/// Whether this process's standard output gets colours.
pub fn terminal_color() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        let set = |v: &str| std::env::var_os(v).is_some_and(|x| !x.is_empty() && x != "0");
        if set("NO_COLOR") {
            return false;
        }
        if set("CLICOLOR_FORCE") {
            return true;
        }
        std::io::stdout().is_terminal() && std::env::var_os("TERM").is_none_or(|t| t != "dumb")
    })
}

fn paint(style: Style, text: &str) -> String {
    if terminal_color() && !text.is_empty() {
        format!("{}{text}{}", style.render(), style.render_reset())
    } else {
        text.to_string()
    }
}

/// Ids and other secondary detail.
pub fn dim(text: &str) -> String {
    paint(Style::new().effects(Effects::DIMMED), text)
}

/// Headings and what matters most on a line.
pub fn bold(text: &str) -> String {
    paint(Style::new().effects(Effects::BOLD), text)
}

/// Good news: added, active, resolved.
pub fn green(text: &str) -> String {
    paint(AnsiColor::Green.on_default(), text)
}

/// Needs attention: conflicts, pending.
pub fn yellow(text: &str) -> String {
    paint(AnsiColor::Yellow.on_default().effects(Effects::BOLD), text)
}

/// Errors and retired memories.
pub fn red(text: &str) -> String {
    paint(AnsiColor::Red.on_default(), text)
}

/// Ids.
pub fn cyan(text: &str) -> String {
    paint(AnsiColor::Cyan.on_default(), text)
}

/// Pad `text` (which may hold colour codes) to `width` visible characters.
pub fn pad(text: &str, visible: usize, width: usize) -> String {
    format!("{text}{}", " ".repeat(width.saturating_sub(visible)))
}

/// A progress bar on standard error when it is a terminal; hidden otherwise.
pub fn progress(len: Option<u64>, message: &'static str) -> indicatif::ProgressBar {
    let target = if std::io::stderr().is_terminal() {
        indicatif::ProgressDrawTarget::stderr()
    } else {
        indicatif::ProgressDrawTarget::hidden()
    };
    let bar = match len {
        Some(n) => indicatif::ProgressBar::with_draw_target(Some(n), target).with_style(
            indicatif::ProgressStyle::with_template("{msg:>10} [{bar:30}] {pos}/{len} ({eta} left)")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("=> "),
        ),
        None => indicatif::ProgressBar::with_draw_target(None, target).with_style(
            indicatif::ProgressStyle::with_template("{msg:>10} {spinner} {pos} ({elapsed})")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        ),
    };
    bar.set_message(message);
    bar
}
