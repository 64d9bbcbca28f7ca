//! A name that an event records: a classification's gate, a score's or a threshold's name.
//!
//! A save records about 140 of them (five classifications, each with its gate and a score and a
//! threshold per rule). The program names them with its own `&'static str`s, so a [`Name`]
//! borrows those and recording one allocates nothing. Read back from the ledger, a name that
//! format 2 stored as a code is the listed static name again; any other is owned. Encoded exactly
//! as a `String` is (schemas/src/codec.rs), so the type changes no byte of any event.

use std::borrow::Cow;
use std::fmt;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A recorded name: a static string of the program, or one read back.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(transparent)]
pub struct Name(Cow<'static, str>);

impl Name {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for Name {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl From<&'static str> for Name {
    fn from(name: &'static str) -> Name {
        Name(Cow::Borrowed(name))
    }
}

impl From<String> for Name {
    fn from(name: String) -> Name {
        Name(Cow::Owned(name))
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<str> for Name {
    fn eq(&self, other: &str) -> bool {
        *self.0 == *other
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}
