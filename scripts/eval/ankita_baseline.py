#!/usr/bin/env python3
"""The peer baseline: the Ankita v2.7.5 lexical rules as its release post describes them.

memledger's lexical classifier started from these rules (docs/adr/0003-lexical-rules.md); this
script scores the rules as written on the same data memledger is measured on, so the two can be
compared in one run:

    python3 scripts/eval/ankita_baseline.py pairs ../shared/eval/sick-dev.jsonl
    python3 scripts/eval/ankita_baseline.py updates ../shared/eval/letta-update-dev.jsonl

The rules (seed 002): content words after stop words; two words match when equal or when the
shorter is a prefix of the longer and at least 4 characters long; score = max(Jaccard,
containment), containment 1 when every content word of the shorter fact is in the longer one, and
0.6 when both facts are short (≤ 2 words) and share one; merge at ≥ 0.85; conflict in [0.55, 0.85)
with ≥ 3 content words, ≥ 2 agreements and Jaccard ≥ 0.5 (one declared kind here: every fact).
The post names a few of its stop words ("I", "my", "use", "database", "project", "stuff"); the rest
of the list is a common English one.
"""
import json, re, sys

STOP = set("""a an the this that these those there here it its i me my mine we us our you your he him
his she her they them their is are was were be been being am do does did have has had will would
shall should can could may might must to of in on at by for with from into about as than then so
and or but if also just very really some any each every all both other such own same too up down
out off over under again once only more most much many few use uses used using thing things stuff
database project what which who whom whose when where why how not no""".split())
# Ankita strips negation with the filler: the post lists no polarity rule.

MERGE, BAND, MIN_WORDS, MIN_AGREE, MIN_JACCARD, PREFIX = 0.85, 0.55, 3, 2, 0.5, 4


def words(text):
    toks = re.findall(r"[a-z0-9][a-z0-9'.-]*", text.lower())
    return [t.strip("'.-") for t in toks if t.strip("'.-") and t.strip("'.-") not in STOP]


def match(x, y):
    if x == y:
        return True
    s, l = (x, y) if len(x) <= len(y) else (y, x)
    return len(s) >= PREFIX and l.startswith(s)


def compare(a, b):
    wa, wb = list(dict.fromkeys(words(a))), list(dict.fromkeys(words(b)))
    used, agree = set(), 0
    for x in wa:
        for j, y in enumerate(wb):
            if j not in used and match(x, y):
                used.add(j); agree += 1; break
    union = len(wa) + len(wb) - agree
    jac = agree / union if union else 0.0
    short, long_ = min(len(wa), len(wb)), max(len(wa), len(wb))
    cont = 1.0 if short and agree == short else (0.6 if agree and long_ <= 2 else 0.0)
    score = max(jac, cont)
    if score >= MERGE:
        return "identical", score
    if score >= BAND and long_ >= MIN_WORDS and agree >= MIN_AGREE and jac >= MIN_JACCARD:
        return "contradictory", score
    return ("complementary" if score >= BAND else "unrelated"), score


def pairs(path):
    rows = [json.loads(l) for l in open(path) if l.strip()]
    classes = ["identical", "distinct", "contradictory"]
    m = {g: {p: 0 for p in classes} for g in classes}
    for r in rows:
        rel, _ = compare(r["a"], r["b"])
        pred = "distinct" if rel in ("complementary", "unrelated") else rel
        gold = "distinct" if r["label"] in ("complementary", "unrelated") else r["label"]
        m[gold][pred] += 1
    f1s = []
    for c in classes:
        tp = m[c][c]; pp = sum(m[g][c] for g in classes); gp = sum(m[c].values())
        p = tp / pp if pp else 0.0; r = tp / gp if gp else 0.0
        f1s.append(2 * p * r / (p + r) if p + r else 0.0)
        print(f"{c:>14}  precision {p:.3f}  recall {r:.3f}  f1 {f1s[-1]:.3f}")
    contra = sum(m["contradictory"].values())
    print(f"macro-F1 {sum(f1s) / 3:.3f}")
    if contra:
        print(f"false-merge rate (contradictory predicted identical) {m['contradictory']['identical'] / contra:.3f}")


def updates(path):
    """Each row's facts, then its update, into a store of their own: Ankita's findSimilar keeps
    the best-scoring stored fact; a merge updates it, a conflict flags it, else a new row."""
    rows = [json.loads(l) for l in open(path) if l.strip()]
    caught = wrong = fact_conflicts = facts = merged = 0
    for r in rows:
        stored = []
        for f in r["facts"] + [r["update"]]:
            is_update = len(stored) == len(r["facts"])
            best = max(((compare(f, s)[1], i, compare(f, s)[0]) for i, s in enumerate(stored)), default=None)
            kind = best[2] if best and best[2] in ("identical", "contradictory") else None
            if is_update:
                if kind and best[1] in r["overturns"]:
                    caught += 1; merged += kind == "identical"
                elif kind == "contradictory":
                    wrong += 1
            else:
                facts += 1
                fact_conflicts += kind == "contradictory"
            if kind == "identical":
                stored[best[1]] = f
            else:
                stored.append(f)
    print(f"updates caught {caught}/{len(rows)} ({caught / len(rows):.3f}), {merged} of them by a merge "
          f"(the old fact overwritten); conflicts with the wrong fact {wrong}")
    print(f"consistent facts opening a conflict: {fact_conflicts}/{facts} ({fact_conflicts / max(facts, 1):.4f})")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("pairs", "updates"):
        sys.exit(__doc__)
    {"pairs": pairs, "updates": updates}[sys.argv[1]](sys.argv[2])
