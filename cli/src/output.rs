//! Output and errors: JSON or human text on stdout, errors with a hint on stderr, exit codes.

use std::io::{self, BufWriter, Write};

use memledger_engine::EngineError;
use memledger_engine::error::Exit;
use serde::Serialize;

/// An error on its way to stderr and an exit code.
#[derive(Debug)]
pub struct CliError {
    pub code: Exit,
    pub message: String,
    pub hint: Option<String>,
    /// Not permitted: the verb and the scope the caller lacked.
    pub refusal: Option<(String, String)>,
    broken_pipe: bool,
}

impl CliError {
    pub fn new(code: Exit, message: impl Into<String>, hint: Option<String>) -> Self {
        CliError { code, message: message.into(), hint, refusal: None, broken_pipe: false }
    }

    pub fn bad_input(message: impl Into<String>) -> Self {
        Self::new(Exit::BadInput, message, None)
    }

    pub fn is_broken_pipe(&self) -> bool {
        self.broken_pipe
    }

    pub fn print(&self) {
        eprintln!("memledger: error: {}", self.message);
        if let Some(h) = &self.hint {
            eprintln!("hint: {h}");
        }
    }
}

impl From<EngineError> for CliError {
    fn from(e: EngineError) -> Self {
        CliError::from(memledger_commands::CommandError::from(e))
    }
}

impl From<memledger_commands::CommandError> for CliError {
    fn from(e: memledger_commands::CommandError) -> Self {
        let mut error = CliError::new(e.exit(), e.message(), e.hint().map(str::to_string));
        error.refusal = e.refusal().map(|(verb, scope)| (verb.to_string(), scope.to_string()));
        error
    }
}

impl From<memledger_engine::NotPermitted> for CliError {
    fn from(e: memledger_engine::NotPermitted) -> Self {
        CliError::from(EngineError::from(e))
    }
}

impl From<io::Error> for CliError {
    fn from(e: io::Error) -> Self {
        let broken_pipe = e.kind() == io::ErrorKind::BrokenPipe;
        CliError { code: Exit::Failure, message: format!("i/o error: {e}"), hint: None, refusal: None, broken_pipe }
    }
}

/// Where results go: standard output and standard error, or buffers of both (a command the
/// server runs for a client, which prints them).
pub struct Output {
    pub json: bool,
    out: Box<dyn Write>,
    /// Notes for standard error, when buffered.
    notes: Option<String>,
    buffer: Option<std::rc::Rc<std::cell::RefCell<Vec<u8>>>>,
}

/// A `Write` into a shared buffer.
struct Shared(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Output {
    pub fn stdout(json: bool) -> Self {
        Output { json, out: Box::new(BufWriter::new(io::stdout())), notes: None, buffer: None }
    }

    /// Output into memory: [`Output::into_parts`] gives what was printed.
    pub fn buffer(json: bool) -> Self {
        let buffer = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        Output { json, out: Box::new(Shared(buffer.clone())), notes: Some(String::new()), buffer: Some(buffer) }
    }

    /// What a buffered output holds: standard output and the notes for standard error.
    pub fn into_parts(self) -> (String, String) {
        let Output { out, notes, buffer, .. } = self;
        drop(out);
        let stdout = buffer.map(|b| String::from_utf8_lossy(&b.borrow()).into_owned()).unwrap_or_default();
        (stdout, notes.unwrap_or_default())
    }

    /// A note for standard error (`memledger: ...`), kept in order with a buffered output.
    pub fn note(&mut self, text: impl AsRef<str>) {
        match &mut self.notes {
            Some(notes) => {
                notes.push_str(text.as_ref());
                notes.push('\n');
            }
            None => {
                let _ = self.out.flush();
                eprintln!("{}", text.as_ref());
            }
        }
    }

    /// One JSON value on its own line.
    pub fn json_line<T: Serialize>(&mut self, value: &T) -> Result<(), CliError> {
        serde_json::to_writer(&mut self.out, value).map_err(|e| CliError::from(io::Error::from(e)))?;
        self.out.write_all(b"\n")?;
        Ok(())
    }

    /// Text as it is (lines that end in their newline).
    pub fn text(&mut self, text: &str) -> Result<(), CliError> {
        self.out.write_all(text.as_bytes())?;
        Ok(())
    }

    /// A line of human text.
    pub fn line(&mut self, text: impl AsRef<str>) -> Result<(), CliError> {
        self.out.write_all(text.as_ref().as_bytes())?;
        self.out.write_all(b"\n")?;
        Ok(())
    }

    pub fn flush(&mut self) -> Result<(), CliError> {
        self.out.flush()?;
        Ok(())
    }

    /// The raw writer, for streams (export).
    pub fn writer(&mut self) -> &mut dyn Write {
        &mut self.out
    }
}

/// Shorten text for one-line human output.
pub fn clip(text: &str, max: usize) -> String {
    let one_line = text.replace('\n', " ");
    if one_line.chars().count() <= max {
        return one_line;
    }
    let mut s: String = one_line.chars().take(max.saturating_sub(1)).collect();
    s.push('…');
    s
}
