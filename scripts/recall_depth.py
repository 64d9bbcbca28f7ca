#!/usr/bin/env python3
"""How deep in recall's ranking the evidence of LoCoMo's questions lies: the share of questions
with an evidence memory among the first 5, 10, 20 and 50 results. The share at 20 is what a
reranker (which reorders the first 20, docs/models.md) can at best bring into the first five.

Saves and asks exactly as ../shared/eval/recall.py does (its hit rule: a returned memory whose
lineage holds one of the question's evidence ids), with `--limit 50`; models are whatever the
environment configures. Run through `scripts/eval_recall.sh --depth`, or:

    scripts/recall_depth.py --bin $CARGO_TARGET_DIR/release/memledger ../shared/eval/locomo-dev.json
"""
import argparse, json, os, subprocess, sys, tempfile

DEPTHS = (5, 10, 20, 50)


def run(b, store, *args):
    p = subprocess.run([b, "--dir", store, "--json", *args], capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"memledger {' '.join(args[:2])} exited {p.returncode}: {p.stderr.strip()[:300]}")
    return p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("file")
    a = ap.parse_args()
    data = json.load(open(a.file))
    store = os.path.join(tempfile.mkdtemp(prefix="recall-depth-"), "store")
    lines, sources = [], []
    for conv in data:
        for _, session in sorted(conv["observation"].items(), key=lambda kv: int(kv[0].split("_")[1])):
            for facts in session.values():
                for f in facts:
                    ev = f[1] if isinstance(f[1], list) else [f[1]]
                    lines.append({"text": f[0], "scope": conv["sample_id"], "source": ",".join(ev)})
                    sources.append(set(ev))
    with open(store + "-lines.jsonl", "w") as fh:
        fh.writelines(json.dumps(l) + "\n" for l in lines)
    saved = [json.loads(l) for l in run(a.bin, store, "save", "--from", store + "-lines.jsonl").splitlines() if l.strip()]
    evidence_of, root_of = {}, {}
    for o, ev in zip(saved, sources):
        if "root_id" in o:
            evidence_of.setdefault(o["root_id"], set()).update(ev)
            root_of[o["memory_id"]] = o["root_id"]
    if os.environ.get("MEMLEDGER_EMBED_URL"):
        run(a.bin, store, "embed")
    found = dict.fromkeys(DEPTHS, 0)
    total, ranking = 0, None
    for conv in data:
        for qa in conv["qa"]:
            if qa["category"] == 5:
                continue
            total += 1
            res = json.loads(run(a.bin, store, "recall", qa["question"], "--scope", conv["sample_id"], "--limit", "50"))
            ranking = res.get("ranking")
            ev = set(qa.get("evidence", []))
            hits = [bool(evidence_of.get(root_of.get(r["memory_id"], r["memory_id"]), set()) & ev) for r in res["results"]]
            for d in DEPTHS:
                found[d] += any(hits[:d])
    print("  ".join(f"evidence in the first {d}: {found[d] / total:.3f}" for d in DEPTHS)
          + f"  ({total} questions, ranking {ranking})")


main()
