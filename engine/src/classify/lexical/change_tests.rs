//! Generated fixtures for announced changes and roles of one holder: many subjects, verbs and
//! values, each change against the belief it changes (a new version), against one naming another
//! old value (a conflict), and the cases that stay as they are (another topic, the new value
//! already stored, a plan, a role of many holders, another owner, the speaker's other facts).

use super::*;

/// A pair classified with the default configuration (`denial_tests` uses these helpers too).
pub(super) fn c(a: &str, b: &str) -> Verdict {
    classify(a, b, None, None, &LexicalConfig::default())
}

/// Things a team runs somewhere, with places they run: (topic as stored, topic as moved, places).
const HOSTED: &[(&str, &str)] = &[
    ("Our CI runs on", "CI"),
    ("Our wiki is hosted on", "the wiki"),
    ("Our staging database runs on", "the staging database"),
    ("The blog is hosted on", "the blog"),
    ("Our docs site is served from", "the docs site"),
    ("Our build cache lives on", "the build cache"),
];
const PLACES: &[(&str, &str)] = &[
    ("GitHub Actions", "GitLab"),
    ("Jenkins", "CircleCI"),
    ("Heroku", "Render"),
    ("Netlify", "Vercel"),
    ("Confluence", "Notion"),
];
const MOVE_VERBS: &[&str] = &["moved", "migrated", "switched", "have moved", "just migrated", "finally moved"];

const TOOLS: &[(&str, &str)] = &[
    ("Slack", "Microsoft Teams"),
    ("Jira", "Linear"),
    ("Zoom", "Google Meet"),
    ("Postgres", "MySQL"),
    ("Trello", "Asana"),
];
const PURPOSES: &[&str] = &["for team chat", "for our tickets", "for meetings", "for the main database", "daily"];
const SWITCH_VERBS: &[&str] = &["switched", "moved", "changed", "migrated", "have switched", "recently switched"];

const EMPLOYERS: &[(&str, &str)] = &[("Google", "Meta"), ("Stripe", "Shopify"), ("Acme", "Initech"), ("IBM", "Oracle")];

const EVENTS: &[&str] = &["The deadline", "The launch", "The team offsite", "The release", "The review meeting"];
const DAYS: &[(&str, &str)] = &[("Friday", "Monday"), ("Tuesday", "Thursday"), ("March 3", "April 10")];
const SCHEDULE_VERBS: &[&str] = &[
    "was pushed to",
    "was postponed to",
    "has been moved to",
    "was rescheduled to",
    "got delayed to",
    "was brought forward to",
];

#[track_caller]
pub(super) fn expect(incoming: &str, stored: &str, gate: Gate) {
    let v = c(incoming, stored);
    assert_eq!(
        (v.relation, v.gate),
        (Relation::Contradictory, gate),
        "{incoming:?} against {stored:?}: {} ({})",
        v.gate.as_str(),
        v.reason
    );
}

#[track_caller]
fn expect_not(incoming: &str, stored: &str, gate: Gate) {
    let v = c(incoming, stored);
    assert_ne!(v.gate, gate, "{incoming:?} against {stored:?}: {}", v.reason);
}

#[track_caller]
pub(super) fn expect_quiet(incoming: &str, stored: &str) {
    let v = c(incoming, stored);
    assert_ne!(
        v.relation,
        Relation::Contradictory,
        "{incoming:?} against {stored:?}: {} ({})",
        v.gate.as_str(),
        v.reason
    );
}

#[test]
fn a_thing_moved_elsewhere_is_an_announced_change_in_both_directions() {
    let mut n = 0;
    for (stored_topic, topic) in HOSTED {
        for (x, y) in PLACES {
            for (old, new) in [(x, y), (y, x)] {
                for verb in MOVE_VERBS {
                    let stored = format!("{stored_topic} {old}");
                    expect(&format!("We {verb} {topic} to {new}"), &stored, Gate::AnnouncedChange);
                    expect(&format!("We {verb} {topic} from {old} to {new}"), &stored, Gate::AnnouncedChange);
                    // from a place the belief does not name, while it names another: a conflict
                    expect(&format!("We {verb} {topic} from Bitbucket to {new}"), &stored, Gate::ChangedFromOther);
                    // already there, another thing moved, only planned: no change of this belief
                    expect_not(&format!("We {verb} {topic} to {old}"), &stored, Gate::AnnouncedChange);
                    expect_quiet(&format!("We plan to move {topic} to {new}"), &stored);
                    expect_quiet(&format!("We might move {topic} to {new}"), &stored);
                    expect_quiet(&format!("We {verb} the payroll export to {new}"), &stored);
                    n += 1;
                }
            }
        }
    }
    assert!(n >= 300, "{n}");
}

#[test]
fn a_tool_switched_from_one_to_another_is_a_change() {
    for (x, y) in TOOLS {
        for (old, new) in [(x, y), (y, x)] {
            for purpose in PURPOSES {
                let stored = format!("We use {old} {purpose}");
                for verb in SWITCH_VERBS {
                    expect(&format!("We {verb} from {old} to {new}"), &stored, Gate::AnnouncedChange);
                    expect(&format!("We {verb} to {new} from {old}"), &stored, Gate::AnnouncedChange);
                    // the new value already stored: nothing changed
                    expect_quiet(&format!("We {verb} from {old} to {new}"), &format!("We use {new} {purpose}"));
                    // someone else's tool: another subject
                    expect_quiet(&format!("We {verb} from {old} to {new}"), &format!("Alice uses {old} {purpose}"));
                }
                expect(&format!("We use {new} instead of {old}"), &stored, Gate::AnnouncedChange);
                expect(&format!("We replaced {old} with {new}"), &stored, Gate::AnnouncedChange);
                expect(&format!("We no longer use {old}"), &stored, Gate::AnnouncedChange);
                expect(&format!("We do not use {old} any more"), &stored, Gate::AnnouncedChange);
                // with no topic but the speaker, a third tool the lexicon does not know is not
                // known to be the old one
                expect_quiet(&format!("We switched from {old} to {new}"), &format!("We use Tandemtalk {purpose}"));
            }
        }
    }
    // a third tool of the same kind: the stored one says another was in use, which the change
    // does not mention
    expect("We switched from Slack to Microsoft Teams", "We use Discord", Gate::ChangedFromOther);
    expect("We moved from Jira to Linear", "We use Asana", Gate::ChangedFromOther);
    expect("We migrated from Postgres to MySQL", "We use SQLite daily", Gate::ChangedFromOther);
}

#[test]
fn now_announces_a_new_employer_city_or_holder() {
    for (x, y) in EMPLOYERS {
        for (old, new) in [(x, y), (y, x)] {
            for (stored, incoming) in [
                (format!("I work at {old}"), format!("I now work at {new}")),
                (format!("I work for {old}"), format!("I now work for {new}")),
                (format!("My sister works at {old}"), format!("My sister now works at {new}")),
                (format!("We bank with {old}"), format!("We now bank with {new}")),
            ] {
                expect(&incoming, &stored, Gate::AnnouncedChange);
                // the new employer already stored, another verb, another person: no change
                expect_not(&incoming, &incoming.replace(" now", ""), Gate::AnnouncedChange);
                expect_quiet(&incoming, "I work remotely on Fridays");
            }
            expect(&format!("I no longer work at {old}"), &format!("I work at {old}"), Gate::AnnouncedChange);
            expect_quiet(&format!("My brother now works at {new}"), &format!("I work at {old}"));
        }
    }
    for (old, new) in [("Paris", "Berlin"), ("Boston", "Denver"), ("Lisbon", "Madrid")] {
        expect(&format!("I now live in {new}"), &format!("I live in {old}"), Gate::AnnouncedChange);
        expect(&format!("I moved to {new}"), &format!("I live in {old}"), Gate::AnnouncedChange);
        expect(&format!("We moved from {old} to {new}"), &format!("We live in {old}"), Gate::AnnouncedChange);
    }
}

/// A change of the subject's state leaves what happened to the subject: where someone was born,
/// grew up or lived, what they used to do. What holds still changes.
#[test]
fn a_move_leaves_where_someone_was_born_or_lived() {
    for (old, new) in [("Paris", "Berlin"), ("Boston", "Denver"), ("Lisbon", "Madrid"), ("Spain", "Canada")] {
        for change in [format!("I moved to {new}"), format!("I now live in {new}"), format!("We moved to {new}")] {
            let we = change.starts_with("We");
            let who = if we { "We" } else { "I" };
            for past in [
                format!("{who} {} born in {old}", if we { "were" } else { "was" }),
                format!("{who} grew up in {old}"),
                format!("{who} lived in {old} as a student"),
                format!("{who} used to live in {old}"),
                format!("{who} {} in {old} last spring", if we { "were" } else { "was" }),
            ] {
                expect_quiet(&change, &past);
            }
            expect(&change, &format!("{who} live in {old}"), Gate::AnnouncedChange);
            expect(&change, &format!("{who} have lived in {old}"), Gate::AnnouncedChange);
        }
        expect_quiet(&format!("My sister moved to {new}"), &format!("My sister was born in {old}"));
        expect(&format!("My sister moved to {new}"), &format!("My sister lives in {old}"), Gate::AnnouncedChange);
    }
    // a date moved is a date moved, however the stored one is told
    expect("The deadline was pushed to Monday", "The deadline was Friday", Gate::AnnouncedChange);
}

#[test]
fn a_date_moved_is_an_announced_change() {
    for event in EVENTS {
        for (x, y) in DAYS {
            for (old, new) in [(x, y), (y, x)] {
                let stored = format!("{event} is on {old}");
                for verb in SCHEDULE_VERBS {
                    expect(&format!("{event} {verb} {new}"), &stored, Gate::AnnouncedChange);
                    // another event, or the new date already stored
                    expect_not(&format!("The budget review {verb} {new}"), &stored, Gate::AnnouncedChange);
                    expect_not(&format!("{event} {verb} {old}"), &stored, Gate::AnnouncedChange);
                }
                expect(&format!("{event} is now on {new}"), &stored, Gate::AnnouncedChange);
            }
        }
    }
    // a verb of moving in time moves a time: "pushed the fix to main" is no new date
    expect_quiet("I pushed the fix to main", "The fix is on the release branch");
}

/// A change of the speaker's with no topic of its own ("I moved to Lisbon") changes only a value of
/// its category the speaker holds, never the speaker's other facts.
#[test]
fn a_change_of_the_speakers_leaves_the_speakers_other_facts() {
    let facts = [
        "I use VS Code with the Vim keybindings",
        "My laptop is a MacBook Pro with 32 GB of memory",
        "I started learning Portuguese two years ago",
        "My manager is Marco",
        "My parents live in Pune",
        "I took Friday off to visit my parents",
        "My partner's name is Rui",
        "I speak English and Hindi",
        "My birthday is on 23 July",
    ];
    for change in [
        "I moved to Lisbon in 2021",
        "I switched from Firefox to Arc in April",
        "We moved to Berlin last year",
        "I now use Obsidian",
        "Sam is now a volunteer coach in the group",
    ] {
        for fact in facts {
            expect_quiet(change, fact);
        }
    }
    expect_quiet("Sam is now a volunteer coach in the group", "Evan encourages Sam to look after his health");
    expect_quiet("Sam is now a volunteer coach in the group", "Sam and a friend are travelling to Lake Tahoe");
}

#[test]
fn a_change_with_nothing_of_the_old_value_to_replace_stays_as_it_is() {
    for (incoming, stored) in [
        ("We moved CI to GitLab", "Our CI pipeline takes ten minutes"),
        ("We moved CI to GitLab", "Our CI runs the integration tests first"),
        ("I now work at Meta", "I work remotely on Fridays"),
        ("We switched to Microsoft Teams", "We use Microsoft Teams for meetings"),
        ("The deadline was pushed to Monday", "The launch party is on Friday"),
        ("Alice now leads the search team", "Bob works on the search team"),
        ("We switched from Slack to Teams", "Slack has a free plan"),
    ] {
        expect_quiet(incoming, stored);
    }
}

/// "My landlord is French" says what the landlord is, not who: no holder of the role.
#[test]
fn a_nationality_is_no_holder_of_a_role() {
    for (x, y) in [("French", "Sarah"), ("Brazilian", "Mr. Hale"), ("Chinese", "Dr. Lee"), ("Catholic", "Tom")] {
        expect_not(&format!("My landlord is {x}"), &format!("My landlord is {y}"), Gate::RoleHolder);
        expect_not(&format!("My manager is {y}"), &format!("My manager is {x}"), Gate::RoleHolder);
    }
    expect("My manager is Jordan", "My manager is Sarah", Gate::RoleHolder);
    let v = c("My landlord is French", "My landlord is German");
    assert_eq!((v.relation, v.gate), (Relation::Contradictory, Gate::ValueMismatch), "{}", v.reason);
}

const ROLES: &[&str] = &["manager", "boss", "landlord", "dentist", "partner", "mentor", "accountant", "therapist"];
const NAMES: &[(&str, &str)] =
    &[("Sarah", "Tom"), ("Priya Nair", "Marco Rossi"), ("Mr. Hale", "Ms. Okafor"), ("Dr. Lee", "Dr. Adams")];

#[test]
fn a_role_of_one_holder_held_by_another_is_a_contradiction_in_every_form() {
    for role in ROLES {
        for (x, y) in NAMES {
            for (one, other) in [(x, y), (y, x)] {
                let forms = |who: &str| {
                    vec![format!("My {role} is {who}"), format!("{who} is my {role}"), format!("Our {role} is {who}")]
                };
                let (a, b) = (forms(one), forms(other));
                for i in [0, 1] {
                    for j in [0, 1] {
                        expect(&a[i], &b[j], Gate::RoleHolder);
                    }
                }
                expect(&a[2], &b[2], Gate::RoleHolder);
                // the same holder, another role, another owner, many holders: no contradiction
                expect_quiet(&a[0], &a[1]);
                expect_quiet(&format!("My {role} is {one}"), &format!("My sister's {role} is {other}"));
                expect_quiet(&format!("{one} is a {role}"), &format!("{other} is a {role}"));
                expect_quiet(&format!("{one} is one of my {role}s"), &format!("{other} is one of my {role}s"));
                expect_quiet(&format!("My {role}s are {one} and {other}"), &format!("My {role} is {other}"));
            }
        }
    }
    expect_quiet("My manager is Sarah", "My landlord is Tom");
}

#[test]
fn a_lead_of_one_team_and_a_pets_name_are_slots_of_one_holder() {
    for (role, team) in
        [("tech lead", "payments team"), ("CEO", "Acme"), ("head", "marketing"), ("owner", "billing service")]
    {
        for (x, y) in [("Alice", "Bob"), ("Priya", "Chen")] {
            for (one, other) in [(x, y), (y, x)] {
                expect(
                    &format!("{one} is the {role} of the {team}"),
                    &format!("{other} is the {role} of the {team}"),
                    Gate::RoleHolder,
                );
                expect(
                    &format!("The {role} of the {team} is {one}"),
                    &format!("{other} is the {role} of the {team}"),
                    Gate::RoleHolder,
                );
                expect_quiet(
                    &format!("{one} is the {role} of the {team}"),
                    &format!("{other} is the {role} of the research group"),
                );
                expect_quiet(
                    &format!("{one} is an engineer on the {team}"),
                    &format!("{other} is an engineer on the {team}"),
                );
            }
        }
    }
    for pet in ["dog", "cat", "parrot", "horse"] {
        for (x, y) in [("Max", "Buddy"), ("Luna", "Nala")] {
            for (one, other) in [(x, y), (y, x)] {
                expect(&format!("My {pet} is named {one}"), &format!("My {pet}'s name is {other}"), Gate::RoleHolder);
                expect(&format!("My {pet} is called {one}"), &format!("My {pet} is named {other}"), Gate::RoleHolder);
                expect_quiet(&format!("My {pet} is named {one}"), &format!("My {pet}'s name is {one}"));
                expect_quiet(&format!("My {pet} is named {one}"), &format!("My neighbour's {pet} is named {other}"));
            }
        }
    }
    expect("Manager: Sarah", "Manager: Tom", Gate::RoleHolder);
}

#[test]
fn the_change_lexicons_load() {
    assert!(super::announce::cue_count() >= 30);
    assert!(super::roles::role_count() >= 80);
}

/// A guess ("may have…", "could be…") denied of the same subject by a memory sure of itself is
/// overturned; a guess beside a denial of something else, or of someone else, stays.
#[test]
fn a_guess_denied_of_the_same_subject_is_a_contradiction() {
    const GUESSES: &[(&str, &str)] = &[
        ("published articles or research papers", "has never published any articles or research papers"),
        ("received awards for her photography", "has never received any awards for her photography"),
        ("been involved in community theatre", "has never been involved in community theatre"),
        ("owned a farm in Denmark", "never owned a farm in Denmark"),
    ];
    for who in ["Jonathen Agular", "Rachelle Myra", "Dr. Lena Ortiz"] {
        for (claim, denial) in GUESSES {
            for hedge in ["may have", "might have", "could have"] {
                let guess = format!("{who} {hedge} {claim}.");
                let denied = format!("{who} {denial}.");
                // a denial that restates the guess word for word is a plain negation
                for (x, y) in [(&denied, &guess), (&guess, &denied)] {
                    let v = c(x, y);
                    assert!(
                        v.relation == Relation::Contradictory && matches!(v.gate, Gate::DeniedGuess | Gate::Negation),
                        "{x:?} against {y:?}: {} ({})",
                        v.gate.as_str(),
                        v.reason
                    );
                }
                // another person, or something else denied
                expect_quiet(&format!("Marta Quill {denial}."), &guess);
                expect_quiet(&format!("{who} has never lived abroad."), &guess);
            }
        }
    }
    // the shape the negation gate drops: the denial says more around it
    expect(
        "Jonathen Agular has never published any articles or research papers and has no record of academic publications.",
        "Jonathen Agular may have published articles or research papers.",
        Gate::DeniedGuess,
    );
    // two guesses, or two sure statements, are not this
    expect_not(
        "Rachelle Myra may never have published any articles.",
        "Rachelle Myra may have published articles.",
        Gate::DeniedGuess,
    );
}
