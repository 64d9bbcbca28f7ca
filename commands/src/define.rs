//! The grammar of the one list of commands ([`crate::with_commands`]) and what the command layer
//! makes of it: the [`Call`](crate::Call) enum with its names and whether each may write, the
//! [`Answer`](crate::Answer) enum with how each answer is written and read back, and the
//! dispatch from a call to the function that answers it. A command is one entry of the list:
//!
//! ```text
//! /// Doc comment (the call's, in the OpenAPI document too).
//! "name" Variant(Request) -> AnswerDocument {
//!     reads|writes  doc|lines  answer|executed  |ml, caller, request, settings| expression
//! }
//! ```
//!
//! - `"name"`: the `command` tag of the call's JSON (`Call::name`): the variant in snake case.
//! - `reads` or `writes`: whether it may append to the ledger (`Call::writes`).
//! - `doc` or `lines`: its `--json` output is one document, or one per item of a list.
//! - `answer`: the expression is `Result<AnswerDocument, CommandError>`; `executed`: it is
//!   `Result<Executed, CommandError>` (a command that can fail after answering part).

/// Expands the list given to it (`with_commands!(define_commands)`): see the module's doc.
macro_rules! define_commands {
    (@writes reads) => { false };
    (@writes writes) => { true };
    (@finish answer, $variant:path, $run:expr) => {{
        let answered: Result<_, $crate::CommandError> = $run;
        Ok($crate::Executed::answered($variant(answered?)))
    }};
    (@finish executed, $variant:path, $run:expr) => { $run };
    ($(
        $(#[$meta:meta])*
        $name:literal $call:ident($request:ty) -> $answer:ty {
            $access:ident $form:ident $outcome:ident |$ml:tt, $caller:tt, $req:tt, $settings:tt| $run:expr
        }
    )*) => {
        /// A store command, as the CLI parsed it.
        #[derive(Clone, Debug, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
        // The tag is the variant's name in snake case (a test holds it to the list's name: the
        // OpenAPI derive reads no name a macro passes it).
        #[serde(tag = "command", rename_all = "snake_case", deny_unknown_fields)]
        pub enum Call {
            $( $(#[$meta])* $call($request), )*
        }

        impl Call {
            /// Its name as the API spells it (`save`, `conflicts_resolve`): the `command` tag of
            /// its JSON form.
            pub fn name(&self) -> &'static str {
                match self { $( Call::$call(_) => $name, )* }
            }

            /// Every call's name, in the list's order.
            pub const NAMES: &'static [&'static str] = &[$($name),*];

            /// Whether the call may append to the ledger.
            pub fn writes(&self) -> bool {
                match self { $( Call::$call(_) => define_commands!(@writes $access), )* }
            }
        }

        /// One command's answer. Its JSON is the variant's own document (`#[serde(untagged)]`);
        /// which command it answers is the [`Call`]'s (`Answer::parse` reads a document back by
        /// it).
        #[derive(Clone, Debug, serde::Serialize)]
        #[serde(untagged)]
        pub enum Answer {
            $( $call($answer), )*
        }

        impl Answer {
            /// The `--json` output: one document on a line, or (`save --from`, `log`) one per
            /// item.
            pub fn json_lines(&self) -> Result<String, serde_json::Error> {
                let mut out = String::new();
                match self { $( Answer::$call(answer) => $crate::answer::form::$form::write(&mut out, answer)?, )* }
                Ok(out)
            }

            /// The answer to `call` its `--json` output holds (what [`Answer::json_lines`] wrote).
            pub fn parse(call: &Call, json: &str) -> Result<Answer, serde_json::Error> {
                Ok(match call { $( Call::$call(_) => Answer::$call($crate::answer::form::$form::read(json)?), )* })
            }
        }

        /// The function that answers each call.
        fn dispatch(
            ml: &memledger_engine::Memledger,
            caller: &memledger_engine::Caller,
            call: &Call,
            settings: &Settings,
        ) -> Result<Executed, CommandError> {
            match call {
                $( Call::$call($req) => {
                    let $ml = ml;
                    let $caller = caller;
                    let $settings = settings;
                    define_commands!(@finish $outcome, Answer::$call, $run)
                } )*
            }
        }
    };
}
