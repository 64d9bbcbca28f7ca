#!/usr/bin/env python3
"""How many pairs of consistent memories the classifier calls contradictory, by gate.

Every pair of memories within one LoCoMo conversation (../shared/eval/locomo-dev.json), one scope
of tests/fixtures/consistent_stream.jsonl and one row's facts of Letta's update set
(../shared/eval/letta-update-dev.jsonl) goes through `memledger --json classify --pairs` (a dry
run): all of them are consistent, so each contradiction is a false alarm, whatever the candidate
search would have picked. A superset of what saving them could open.

    python3 scripts/eval/consistent_pairs.py --bin $CARGO_TARGET_DIR/release/memledger [--show 10]
"""
import argparse, collections, json, os, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def groups(eval_dir):
    convs = json.load(open(os.path.join(eval_dir, "locomo-dev.json")))
    for conv in convs:
        texts = []
        for _, session in sorted(conv["observation"].items(), key=lambda kv: int(kv[0].split("_")[1])):
            for _, observations in session.items():
                texts.extend(text for text, _ in observations)
        yield "locomo", texts
    by_scope = collections.defaultdict(list)
    for line in open(os.path.join(ROOT, "tests/fixtures/consistent_stream.jsonl")):
        if line.strip():
            r = json.loads(line)
            by_scope[r.get("scope", "")].append(r["text"])
    for texts in by_scope.values():
        yield "consistent_stream", texts
    for line in open(os.path.join(eval_dir, "letta-update-dev.jsonl")):
        if line.strip():
            yield "letta_facts", json.loads(line)["facts"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--eval", default=os.path.join(ROOT, "..", "shared", "eval"))
    ap.add_argument("--show", type=int, default=0)
    a = ap.parse_args()
    sets, pairs = {}, []
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for name, texts in groups(a.eval):
            for i, x in enumerate(texts):
                for y in texts[:i]:
                    pid = str(len(pairs))
                    pairs.append((name, x, y))
                    f.write(json.dumps({"id": pid, "a": x, "b": y}) + "\n")
        path = f.name
    with tempfile.TemporaryDirectory() as store:
        run = subprocess.run([a.bin, "--dir", store, "--json", "classify", "--pairs", path],
                             capture_output=True, text=True)
    os.unlink(path)
    if run.returncode:
        sys.exit(f"classify exited {run.returncode}: {run.stderr.strip()[:300]}")
    found = collections.Counter()
    shown = []
    for line in run.stdout.splitlines():
        if not line.strip():
            continue
        d = json.loads(line)
        name = pairs[int(d["id"])][0]
        sets[name] = sets.get(name, 0) + 1
        if d["relation"] == "contradictory":
            found[(name, d["gate"])] += 1
            shown.append((d["gate"], pairs[int(d["id"])][1], pairs[int(d["id"])][2]))
    for name, n in sets.items():
        by_gate = {g: c for (s, g), c in sorted(found.items()) if s == name}
        print(f"{name}: {sum(by_gate.values())} of {n} pairs contradictory {by_gate}")
    for gate, x, y in shown[: a.show]:
        print(f"\n{gate}: {x}\n    {y}")


main()
