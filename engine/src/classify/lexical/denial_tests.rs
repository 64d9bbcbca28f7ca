//! Generated fixtures for denials, restrictions, joint deeds split and deeds said of someone
//! else: many people, deeds and values, each against the fact it overturns in both directions,
//! and the cases that stay as they are (another subject, a value or an attitude the denial does
//! not share, "not only", "only recently", a restriction that keeps nothing the other side lacks,
//! people who each did something of many values).

use super::change_tests::{c, expect, expect_quiet};
use super::*;

/// A contradiction by the negation gate (the rest agrees) or by the denied clause; the gate.
#[track_caller]
fn expect_denied(incoming: &str, stored: &str) -> Gate {
    let v = c(incoming, stored);
    assert!(
        v.relation == Relation::Contradictory && matches!(v.gate, Gate::DeniedClause | Gate::Negation),
        "{incoming:?} against {stored:?}: {} ({})",
        v.gate.as_str(),
        v.reason
    );
    v.gate
}

const PEOPLE: &[&str] = &["Nicolan Ellys", "Mara Quint", "Tobias Rehn", "Ines Carvalho", "Darian Sollis"];

/// (what the stored fact asserts, what the incoming one denies of the same subject, besides
/// what else it says).
const DENIALS: &[(&str, &str)] = &[
    (
        "has been a guest speaker at several international literary festivals",
        "has never participated in any literary festivals but often speaks at photography exhibitions",
    ),
    ("has won several chess championships in regional clubs", "has never won a chess championship and prefers go"),
    (
        "has published research papers on marine ecology",
        "has never published any research papers, working as a field guide instead",
    ),
    (
        "volunteers at the animal shelter downtown on weekends",
        "has never volunteered at any animal shelter and spends weekends climbing",
    ),
    (
        "is active on social media platforms, sharing travel photos",
        "does not use social media platforms at all and keeps her photos private",
    ),
    (
        "often collaborates with Kelvin Crompton on green technology initiatives",
        "works alone on green technology initiatives and has never collaborated with Kelvin Crompton",
    ),
];

#[test]
fn a_clause_denying_what_the_other_asserts_of_the_same_subject_is_a_contradiction() {
    // where the rest agrees the negation gate decides first; the denied clause decides the others
    let mut by_denied_clause = 0;
    for person in PEOPLE {
        for (asserted, denied) in DENIALS {
            let (a, d) = (format!("{person} {asserted}."), format!("{person} {denied}."));
            for (incoming, stored) in [(&d, &a), (&a, &d)] {
                by_denied_clause += usize::from(expect_denied(incoming, stored) == Gate::DeniedClause);
            }
        }
    }
    assert!(by_denied_clause >= PEOPLE.len() * 2 * (DENIALS.len() - 1), "{by_denied_clause}");
    // the speaker is one subject too
    for (asserted, denied) in [
        ("I run the nightly backups on the staging cluster", "I never run backups on the staging cluster, Priya does"),
        (
            "We deploy the billing service on Fridays",
            "We have never deployed any billing service on a Friday, and we keep Fridays for hotfixes",
        ),
    ] {
        expect_denied(denied, asserted);
        expect_denied(asserted, denied);
    }
}

#[test]
fn a_denial_of_another_subject_or_of_something_else_stays_as_it_is() {
    for (n, person) in PEOPLE.iter().enumerate() {
        let other = PEOPLE[(n + 1) % PEOPLE.len()];
        // another person (a denial naming a third one is a correction: "A has never collaborated
        // with K" / "B collaborates with K")
        for (asserted, denied) in DENIALS.iter().filter(|(_, d)| !d.contains(char::is_uppercase)) {
            expect_quiet(&format!("{other} {denied}."), &format!("{person} {asserted}."));
        }
        // "not only" adds
        expect_quiet(
            &format!("{person} not only plays the cello but also sings in the city choir."),
            &format!("{person} plays the cello in the city orchestra."),
        );
        // a guess that does not deny
        expect_quiet(
            &format!("{person} might not attend the design summit in Berlin this year."),
            &format!("{person} often speaks at design conferences in Lisbon."),
        );
    }
    // a time the denial names that the other side does not assert
    expect_quiet("I don't drink coffee after 4pm", "I drink a cup of coffee after lunch");
    expect_quiet("We never deploy the billing service after 5pm", "We deploy the billing service every morning");
    // an attitude the other side does not share
    expect_quiet("I don't like reviewing PRs late in the evening", "I prefer PRs reviewed within a day");
}

/// (language kept, language the other side says is spoken).
const LANGUAGES: &[(&str, &str)] =
    &[("English", "Spanish"), ("Swedish", "German"), ("Japanese", "French"), ("Portuguese", "Italian")];

#[test]
fn a_restriction_that_leaves_out_what_the_other_side_says_is_a_contradiction() {
    for person in PEOPLE {
        for (kept, other) in LANGUAGES {
            let only = format!("{person} only speaks {kept} and does not know any other languages.");
            expect(&only, &format!("{person} speaks fluent {other}."), Gate::Restricted);
            expect(&format!("{person} speaks fluent {other}."), &only, Gate::Restricted);
            expect(
                &format!("{person} speaks only {kept}."),
                &format!("{person} speaks {other} at home."),
                Gate::Restricted,
            );
        }
        for (restricted, said) in [
            (
                "has only exhibited her photography in local galleries within her hometown",
                "has exhibited her photography in galleries across three countries",
            ),
            ("has never traveled outside her home country", "has traveled to over 15 countries"),
            ("has never performed outside of Europe", "once performed at Carnegie Hall in New York"),
            ("has held exhibitions exclusively in Tokyo", "has held exhibitions in London and Paris"),
        ] {
            let (r, s) = (format!("{person} {restricted}."), format!("{person} {said}."));
            expect(&r, &s, Gate::Restricted);
            expect(&s, &r, Gate::Restricted);
        }
    }
}

#[test]
fn a_restriction_that_keeps_what_the_other_side_says_stays_as_it_is() {
    for (n, person) in PEOPLE.iter().enumerate() {
        let other = PEOPLE[(n + 2) % PEOPLE.len()];
        // the restriction keeps nothing the other side lacks
        expect_quiet(&format!("{person} only speaks English."), &format!("{person} speaks English fluently."));
        // another subject
        expect_quiet(&format!("{person} only speaks English."), &format!("{other} speaks fluent Spanish."));
        // "only recently", "not only", "the only": no restriction
        expect_quiet(
            &format!("{person} only recently started running marathons."),
            &format!("{person} runs marathons in Boston every spring."),
        );
        expect_quiet(
            &format!("{person} not only exhibited her photography in local galleries but also abroad."),
            &format!("{person} has exhibited her photography in galleries across three countries."),
        );
        expect_quiet(
            &format!("{person} is the only engineer on the payments team."),
            &format!("{person} is an engineer who enjoys cycling."),
        );
        // a restriction of one thing, the other side's deed of another kind
        expect_quiet(
            &format!("{person} has only contributed to the music industry as a performer."),
            &format!("{person} has contributed to several studio albums."),
        );
    }
    expect_quiet("I only use Vim for quick edits.", "I use Vim with a dark theme.");
}

/// Pairs of people and the school each went to, the joint one first.
const SCHOOLS: &[(&str, &str)] = &[("Edinburgh", "Oxford"), ("Manchester", "Leeds"), ("Oregon", "Stanford")];

#[test]
fn a_joint_deed_told_apart_is_a_contradiction() {
    for (n, a) in PEOPLE.iter().enumerate() {
        let b = PEOPLE[(n + 1) % PEOPLE.len()];
        for (joint, other) in SCHOOLS {
            let both = format!("{a} and {b} both attended the University of {joint}.");
            for split in [
                format!("{a} attended the University of {other}, while {b} attended the University of {joint}."),
                format!("{a} attended {other} University, while {b} attended the University of {joint}."),
                format!(
                    "{a} and {b} attended different universities; {a} attended the University of {joint}, \
                     while {b} attended {other} University."
                ),
            ] {
                expect(&split, &both, Gate::JointSplit);
                expect(&both, &split, Gate::JointSplit);
            }
        }
        // denied to have been done together, each told apart
        let both = format!("{a} and {b} both attended the Global Ocean Summit in 2023.");
        let apart = format!(
            "{a} and {b} did not attend the Global Ocean Summit together; {a} spoke at the opening, while {b} stayed home."
        );
        expect(&apart, &both, Gate::JointSplit);
        expect(&both, &apart, Gate::JointSplit);
    }
}

#[test]
fn people_told_apart_doing_what_holds_many_values_stay_as_they_are() {
    for (n, a) in PEOPLE.iter().enumerate() {
        let b = PEOPLE[(n + 3) % PEOPLE.len()];
        // an attitude holds many values
        expect_quiet(
            &format!("{a} likes hiking in the Alps, while {b} likes hiking in Norway."),
            &format!("{a} and {b} both like hiking."),
        );
        // the joint object names nothing that is replaced
        expect_quiet(
            &format!("{a} attended the keynote, while {b} attended the workshop."),
            &format!("{a} and {b} both attended the conference."),
        );
        // told apart, and the same
        expect_quiet(
            &format!("{a} attended the University of Edinburgh, where {b} also studied."),
            &format!("{a} and {b} both attended the University of Edinburgh."),
        );
    }
}

#[test]
fn a_specific_deed_said_of_someone_else_is_a_contradiction_even_after_an_attitude() {
    for (n, a) in PEOPLE.iter().enumerate() {
        let b = PEOPLE[(n + 1) % PEOPLE.len()];
        let c = PEOPLE[(n + 2) % PEOPLE.len()];
        for deed in [
            format!("enjoys hiking and often invites {c} to join weekend trips."),
            format!("loves cooking and regularly hosts {c} for Sunday dinners at home."),
        ] {
            expect(&format!("{b} {deed}"), &format!("{a} {deed}"), Gate::ReplacedPerson);
        }
        // a category's value is a word of the deed
        let deed = "is a marine biologist who has conducted research in the Pacific Ocean.";
        expect(&format!("{b} {deed}"), &format!("{a} {deed}"), Gate::ReplacedPerson);
        // what one likes, with no one else in it, many like
        for liked in
            ["likes code reviews and clear commit messages.", "enjoys hiking and birdwatching in national parks."]
        {
            expect_quiet(&format!("{b} {liked}"), &format!("{a} {liked}"));
        }
    }
}
