//! A generator of realistic memories about people and software projects, seeded, so that every
//! run of the benchmark saves the same stream. Varied templates and vocabularies: many memories
//! share words, numbers and weekdays, as real notes do.

use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::{Rng, SeedableRng};

const FIRST: &[&str] = &[
    "Ana", "Bruno", "Chen", "Dara", "Elif", "Farah", "Goran", "Hana", "Ines", "Jonas", "Kofi", "Lena", "Marco",
    "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sami", "Tomas", "Uma", "Vera", "Wei", "Ximena", "Yusuf", "Zoe",
    "Arjun", "Bea", "Carlos", "Dmitri", "Emeka", "Freya", "Gita", "Hugo", "Ivan", "Jun", "Kira", "Luis", "Maya",
    "Noor",
];
const LAST: &[&str] = &[
    "Silva", "Okafor", "Tanaka", "Novak", "Haddad", "Berg", "Costa", "Ivanova", "Kim", "Mensah", "Rossi", "Schmidt",
    "Dubois", "Nair", "Park", "Quispe", "Larsen", "Moreau", "Yilmaz", "Zhou",
];
const ADJ: &[&str] = &[
    "amber", "brisk", "cobalt", "dusty", "ember", "frost", "granite", "harbor", "iron", "jade", "kettle", "lunar",
    "maple", "nimbus", "onyx", "pepper", "quartz", "river", "saffron", "timber",
];
const NOUN: &[&str] = &[
    "billing",
    "search",
    "ledger",
    "gateway",
    "scheduler",
    "inbox",
    "catalog",
    "payments",
    "reports",
    "auth",
    "mobile",
    "warehouse",
    "notifier",
    "checkout",
    "profile",
    "metrics",
    "exports",
    "planner",
    "wiki",
    "chat",
];
const TOOLS: &[&str] = &[
    "pnpm",
    "npm",
    "yarn",
    "vim",
    "VS Code",
    "Emacs",
    "tmux",
    "zsh",
    "fish",
    "Docker",
    "Podman",
    "Bazel",
    "Make",
    "just",
    "ripgrep",
    "jq",
    "Postman",
    "Insomnia",
    "DBeaver",
    "TablePlus",
];
const DBS: &[&str] = &["Postgres", "MySQL", "SQLite", "Redis", "ClickHouse", "MongoDB", "DynamoDB", "Cassandra"];
const LANGS: &[&str] = &["Rust", "Go", "Python", "TypeScript", "Kotlin", "Java", "Elixir", "Ruby", "Swift", "C#"];
const ENVS: &[&str] = &["staging", "production", "dev", "qa", "sandbox"];
const DAYS: &[&str] = &["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"];
const TEAMS: &[&str] = &["platform", "growth", "payments", "data", "mobile", "security", "infra", "design", "support"];
const REGIONS: &[&str] = &["us-east-1", "eu-west-1", "ap-south-1", "eu-central-1", "us-west-2"];

/// One memory: text and type.
pub struct Memory {
    pub text: String,
    pub memory_type: &'static str,
    pub scope: String,
}

pub struct Corpus {
    rng: StdRng,
}

impl Corpus {
    pub fn new(seed: u64) -> Self {
        Corpus { rng: StdRng::seed_from_u64(seed) }
    }

    fn person(&mut self) -> String {
        format!("{} {}", FIRST.choose(&mut self.rng).unwrap(), LAST.choose(&mut self.rng).unwrap())
    }

    fn project(&mut self) -> String {
        format!("{}-{}", ADJ.choose(&mut self.rng).unwrap(), NOUN.choose(&mut self.rng).unwrap())
    }

    fn pick<'a>(&mut self, list: &[&'a str]) -> &'a str {
        list.choose(&mut self.rng).unwrap()
    }

    pub fn next_memory(&mut self, i: usize) -> Memory {
        let r = &mut self.rng;
        let n: u32 = r.random_range(1..60);
        let v: u32 = r.random_range(8..18);
        let hour: u32 = r.random_range(7..19);
        let day: u32 = r.random_range(1..28);
        let month: u32 = r.random_range(1..13);
        let template = r.random_range(0..16);
        let scope = format!("team:{}", TEAMS[i % TEAMS.len()]);
        let (text, memory_type) = match template {
            0 => (
                format!(
                    "{} prefers {} over {} for {} work",
                    self.person(),
                    self.pick(TOOLS),
                    self.pick(TOOLS),
                    self.project()
                ),
                "preference",
            ),
            1 => (
                format!("The {} {} database runs on {} {}", self.project(), self.pick(ENVS), self.pick(DBS), v),
                "fact",
            ),
            2 => (
                format!("{} joined the {} team on 2026-{month:02}-{day:02}", self.person(), self.pick(TEAMS)),
                "episode",
            ),
            3 => (
                format!("The {} {} deploy window is {} at {hour}:00", self.project(), self.pick(ENVS), self.pick(DAYS)),
                "fact",
            ),
            4 => (format!("{} is on call for {} in week {n}", self.person(), self.project()), "episode"),
            5 => (
                format!("{} is written in {} and built with {}", self.project(), self.pick(LANGS), self.pick(TOOLS)),
                "fact",
            ),
            6 => (
                format!(
                    "To release {}: bump the version, tag it, push to the release branch and watch the {} dashboard",
                    self.project(),
                    self.pick(ENVS)
                ),
                "procedure",
            ),
            7 => (
                format!(
                    "{} owns the {} service and reviews its pull requests on {}s",
                    self.person(),
                    self.project(),
                    self.pick(DAYS)
                ),
                "fact",
            ),
            8 => {
                (format!("The {} {} cluster lives in {}", self.project(), self.pick(ENVS), self.pick(REGIONS)), "fact")
            }
            9 => (format!("{} does not want meetings before {hour}:00", self.person()), "preference"),
            10 => (
                format!("We shipped {} v{v}.{n} on 2026-{month:02}-{day:02} after {n} days of QA", self.project()),
                "episode",
            ),
            11 => (format!("The {} job retries {n} times with a {v} second backoff", self.project()), "fact"),
            12 => (
                format!("{} keeps {} logs for {n} days in {}", self.project(), self.pick(ENVS), self.pick(REGIONS)),
                "fact",
            ),
            13 => (
                format!(
                    "To rotate the {} API keys: open the vault, create a key, update {} and revoke the old key",
                    self.project(),
                    self.pick(ENVS)
                ),
                "procedure",
            ),
            14 => (
                format!("{} likes code reviews with small diffs and clear commit messages", self.person()),
                "preference",
            ),
            _ => (
                format!(
                    "{} mentors {} on {} every {}",
                    self.person(),
                    self.person(),
                    self.pick(LANGS),
                    self.pick(DAYS)
                ),
                "episode",
            ),
        };
        Memory { text, memory_type, scope }
    }
}
