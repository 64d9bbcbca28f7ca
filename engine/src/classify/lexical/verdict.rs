//! What a classification says: the relation, the gate that decided it, every score.

/// What two memories are to each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relation {
    /// the same fact restated: a paraphrase or an enrichment.
    Identical,
    /// related, and both can be true.
    Complementary,
    /// cannot both be true.
    Contradictory,
    /// nothing to do with each other.
    Unrelated,
}

impl Relation {
    /// Stable lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Relation::Identical => "identical",
            Relation::Complementary => "complementary",
            Relation::Contradictory => "contradictory",
            Relation::Unrelated => "unrelated",
        }
    }
}

/// The rule that decided (or dropped) a pair. Names are stable; see [`Gate::as_str`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// identical: the normalised texts are equal.
    ExactText,
    /// identical: similarity at or above the merge threshold, nothing changed.
    MergeBand,
    /// complementary: in the related band, no evidence of change.
    RelatedBand,
    /// unrelated: below the related band.
    BelowBand,
    /// unrelated: one side has no content word at all.
    NoContent,
    /// complementary (near miss): the declared kinds differ; never identical nor contradictory.
    KindMismatch,
    /// contradictory: one side negates what the other asserts, the rest agrees.
    Negation,
    /// contradictory: a number, version, date, weekday, month, time or quantity changed, the
    /// rest agrees.
    ValueMismatch,
    /// contradictory: an antonym replaces a word, the rest agrees.
    Antonym,
    /// not identical: both sides name a qualifier of the same kind (environment, platform,
    /// region) and they differ, so the facts are distinct.
    QualifierDiffers,
    /// not identical: one side has a qualifier the other lacks (a narrower or wider fact).
    QualifierAdded,
    /// not contradictory: a change was found, but the rest of the facts differ too (another
    /// subject or action), or more than one thing changed.
    RestDiffers,
    /// not contradictory: a change was found but the facts are too short to claim it.
    TooFewWords,
    /// not identical: the longer side adds words that narrow the fact (a modifier inside the
    /// shared phrase, or a trailing phrase), rather than a separable condition, time or clause.
    Narrower,
    /// not identical: the shared words come in another order (roles may be swapped) and
    /// neither side is passive.
    OrderDiffers,
    /// not contradictory: a value changed in a slot that holds many values at once ("plays
    /// guitar" / "plays piano", "visited Spain" / "visited Portugal"), so both can be true.
    MultiValuedSlot,
    /// contradictory: one side denies what the other asserts and says what holds instead
    /// ("never took part in X but organises Y"); the alternative is not compared.
    NegatedAlternative,
    /// contradictory: one side says of someone else what the other says of a person, and
    /// denies it of that person or says something else of them ("B, not A, hosted it"; "B
    /// hosted it, while A did not").
    Correction,
    /// contradictory: the same subject and predicate, and the one slot that differs holds one
    /// value at a time ("is an expert in botany" / "is an expert in astrophysics").
    ReplacedFiller,
    /// not identical, merged: the incoming memory says nothing the stored one does not (every
    /// word of it is in the stored one), though the stored one is narrower.
    Restatement,
    /// not contradictory: a thing changed, but each side speaks of "a" one ("a man" / "a
    /// woman", "a dog" / "a cat"): nothing says they are the same one.
    DifferentReferent,
    /// not contradictory: what changed is who the fact is about ("the girl" / "the boy is
    /// spraying the plants"): two facts about two subjects.
    SubjectDiffers,
    /// contradictory: the same specific deed (at least four words alike) is said of other
    /// people: "A and B co-host the podcast" / "A and C co-host the podcast".
    ReplacedPerson,
    /// contradictory, a new version: the incoming memory announces that what the stored one says
    /// changed ("we moved CI to GitLab" / "our CI runs on GitHub Actions"), and the stored one
    /// holds the old value.
    AnnouncedChange,
    /// contradictory, a conflict: the incoming memory announces a change from a value the stored
    /// one does not hold, and the stored one holds another ("switched from Slack to Teams" / "we
    /// use Discord").
    ChangedFromOther,
    /// contradictory: both name who holds a role of one holder for one owner, and the holders
    /// differ ("my manager is Sarah" / "my manager is Tom").
    RoleHolder,
    /// contradictory: one side guesses ("may have published articles") what the other denies of
    /// the same subject ("has never published any articles").
    DeniedGuess,
    /// contradictory: one side denies of the same subject, in a clause, what the other asserts,
    /// whatever else each says ("has never participated in any literary festivals" / "has been a
    /// guest speaker at several literary festivals").
    DeniedClause,
    /// contradictory: one side restricts what the same subject does to what it names, and the
    /// other says it does something more ("only speaks English" / "speaks fluent Spanish").
    Restricted,
    /// contradictory: one side says people did one thing together or alike ("both attended the
    /// University of Manchester"), the other tells it of each alone and that they did not.
    JointSplit,
    /// contradictory: the incoming memory says that what the stored one holds holds no more
    /// ("dropped piano" / "piano lesson every Saturday"; "the Slack integration is cancelled").
    EndedValue,
    /// contradictory: the incoming memory names the stored one's value as the old one ("use
    /// Paddle rather than Stripe" / "billing runs on Stripe").
    NamedOldValue,
    /// contradictory: the incoming memory reverses a rule or a preference the stored one states
    /// and says it is new ("pushing to main is fine now" / "never push to main").
    ReversedRule,
    /// contradictory: one fact (the same subject and attribute, by shared words, aliases or the
    /// embedder's cosine) with another value of the same kind, said to be new ("Docs moved over
    /// to Mintlify" / "The docs site is built with Docusaurus").
    ChangedValue,
}

impl Gate {
    /// Stable snake_case name recorded in classification events.
    pub fn as_str(self) -> &'static str {
        match self {
            Gate::ExactText => "exact_text",
            Gate::MergeBand => "merge_band",
            Gate::RelatedBand => "related_band",
            Gate::BelowBand => "below_band",
            Gate::NoContent => "no_content",
            Gate::KindMismatch => "kind_mismatch",
            Gate::Negation => "negation",
            Gate::ValueMismatch => "value_mismatch",
            Gate::Antonym => "antonym",
            Gate::QualifierDiffers => "qualifier_differs",
            Gate::QualifierAdded => "qualifier_added",
            Gate::RestDiffers => "rest_differs",
            Gate::TooFewWords => "too_few_words",
            Gate::Narrower => "narrower",
            Gate::OrderDiffers => "order_differs",
            Gate::MultiValuedSlot => "multi_valued_slot",
            Gate::NegatedAlternative => "negated_alternative",
            Gate::Correction => "correction",
            Gate::ReplacedFiller => "replaced_filler",
            Gate::Restatement => "restatement",
            Gate::DifferentReferent => "different_referent",
            Gate::SubjectDiffers => "subject_differs",
            Gate::ReplacedPerson => "replaced_person",
            Gate::AnnouncedChange => "announced_change",
            Gate::ChangedFromOther => "changed_from_other",
            Gate::RoleHolder => "role_holder",
            Gate::DeniedGuess => "denied_guess",
            Gate::DeniedClause => "denied_clause",
            Gate::Restricted => "restricted",
            Gate::JointSplit => "joint_split",
            Gate::EndedValue => "ended_value",
            Gate::NamedOldValue => "named_old_value",
            Gate::ReversedRule => "reversed_rule",
            Gate::ChangedValue => "changed_value",
        }
    }

    /// Every gate, for documentation and exhaustive tests.
    pub const ALL: [Gate; 34] = [
        Gate::ExactText,
        Gate::MergeBand,
        Gate::RelatedBand,
        Gate::BelowBand,
        Gate::NoContent,
        Gate::KindMismatch,
        Gate::Negation,
        Gate::ValueMismatch,
        Gate::Antonym,
        Gate::QualifierDiffers,
        Gate::QualifierAdded,
        Gate::RestDiffers,
        Gate::TooFewWords,
        Gate::Narrower,
        Gate::OrderDiffers,
        Gate::MultiValuedSlot,
        Gate::NegatedAlternative,
        Gate::Correction,
        Gate::ReplacedFiller,
        Gate::Restatement,
        Gate::DifferentReferent,
        Gate::SubjectDiffers,
        Gate::ReplacedPerson,
        Gate::AnnouncedChange,
        Gate::ChangedFromOther,
        Gate::RoleHolder,
        Gate::DeniedGuess,
        Gate::DeniedClause,
        Gate::Restricted,
        Gate::JointSplit,
        Gate::EndedValue,
        Gate::NamedOldValue,
        Gate::ReversedRule,
        Gate::ChangedValue,
    ];
}

/// The outcome of classifying one pair.
#[derive(Clone, Debug)]
pub struct Verdict {
    pub relation: Relation,
    pub gate: Gate,
    /// max(Jaccard, containment) over all tokens, in [0, 1], never NaN.
    pub score: f64,
    /// every score computed, by name.
    pub scores: Vec<(&'static str, f64)>,
    /// one human sentence.
    pub reason: String,
    /// a (incoming) has content the candidate lacks.
    pub incoming_adds: bool,
    /// b (candidate) has content a lacks.
    pub candidate_adds: bool,
    /// in the related band but dropped by the kind gate.
    pub near_miss: bool,
}
