#!/usr/bin/env python3
"""Which gate let each missed Letta update pass, and which consistent pairs were called contradictory.

Every (fact, update) pair of ../shared/eval/letta-update-dev-pairs.jsonl goes through `memledger
--json classify --pairs` (a dry run) with the update as the incoming memory, as a save would
compare them. The pairs labelled contradictory that are not called so are grouped by the gate that
decided them (the levers for the next rule), then the other pairs called contradictory are listed
(the false alarms a rule must not add to).

    python3 scripts/eval/update_misses.py --bin $CARGO_TARGET_DIR/release/memledger [--show 8] [FILE]
"""
import argparse, collections, json, os, random, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = os.path.join(HERE, "..", "..", "..", "shared", "eval", "letta-update-dev-pairs.jsonl")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--show", type=int, default=8, help="missed pairs printed per gate")
    ap.add_argument("file", nargs="?", default=DEFAULT)
    a = ap.parse_args()
    gold = [json.loads(l) for l in open(a.file) if l.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        pairs = os.path.join(tmp, "pairs.jsonl")
        with open(pairs, "w") as f:
            for d in gold:
                f.write(json.dumps({"id": d["id"], "a": d["b"], "b": d["a"]}) + "\n")
        run = subprocess.run([a.bin, "--dir", os.path.join(tmp, "store"), "--json", "classify", "--pairs", pairs],
                             capture_output=True, text=True)
    if run.returncode:
        sys.exit(f"classify exited {run.returncode}: {run.stderr.strip()[:300]}")
    pred = {d["id"]: d for d in map(json.loads, filter(str.strip, run.stdout.splitlines()))}
    missed, alarms = collections.defaultdict(list), []
    for d in gold:
        p = pred[d["id"]]
        if d["label"] == "contradictory" and p["relation"] != "contradictory":
            missed[p.get("gate")].append((d, p))
        elif d["label"] != "contradictory" and p["relation"] == "contradictory":
            alarms.append((d, p))
    ranked = sorted(missed.items(), key=lambda kv: -len(kv[1]))
    total = sum(d["label"] == "contradictory" for d in gold)
    print(f"contradictory pairs missed: {sum(len(v) for v in missed.values())} of {total}")
    print("by gate: " + ", ".join(f"{g} {len(v)}" for g, v in ranked))
    print(f"other pairs called contradictory: {len(alarms)}")
    random.seed(0)
    for g, v in ranked:
        print(f"\n== {g} ({len(v)})")
        for d, p in random.sample(v, min(a.show, len(v))):
            print(f"  fact:   {d['a']}\n  update: {d['b']}\n  -> {p['relation']}: {p.get('reason', '')[:160]}")
    print("\n== called contradictory, labelled otherwise")
    for d, p in alarms:
        print(f"  fact:   {d['a']}\n  update: {d['b']}\n  -> {p.get('gate')}: {p.get('reason', '')[:160]}")


main()
