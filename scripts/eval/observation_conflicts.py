#!/usr/bin/env python3
"""How many conflicts a stream of consistent observations about people's lives opens.

Saves every LoCoMo observation (../shared/eval/locomo-dev.json: what two people said about
themselves over many sessions, written by the dataset's authors) through `save --from`, one scope
per conversation, in session order, and reports the conflicts opened. The observations are
consistent, so each conflict is a false alarm; `--show N` prints some with their reasons.

    python3 scripts/eval/observation_conflicts.py --bin $CARGO_TARGET_DIR/release/memledger ../shared/eval/locomo-dev.json
"""
import argparse, collections, json, os, subprocess, sys, tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--show", type=int, default=0)
    ap.add_argument("file")
    a = ap.parse_args()
    convs = json.load(open(a.file))
    tmp = tempfile.mkdtemp(prefix="observations-")
    lines = []
    for conv in convs:
        for _, session in sorted(conv["observation"].items(), key=lambda kv: int(kv[0].split("_")[1])):
            for _, observations in session.items():
                for text, _ in observations:
                    lines.append({"text": text, "scope": conv["sample_id"]})
    src = os.path.join(tmp, "lines.jsonl")
    with open(src, "w") as f:
        f.writelines(json.dumps(l) + "\n" for l in lines)
    store = os.path.join(tmp, "store")
    p = subprocess.run([a.bin, "--dir", store, "--json", "save", "--from", src], capture_output=True, text=True)
    if p.returncode:
        sys.exit(f"save --from exited {p.returncode}: {p.stderr.strip()[:300]}")
    outs = [json.loads(l) for l in p.stdout.splitlines()]
    text = {o["memory_id"]: l["text"] for o, l in zip(outs, lines)}
    q = subprocess.run([a.bin, "--dir", store, "--json", "conflicts", "list", "--status", "all"],
                       capture_output=True, text=True, check=True)
    conflicts = json.loads(q.stdout)["conflicts"]
    outcomes = collections.Counter(o["outcome"] for o in outs)
    print(f"{len(conflicts)} conflicts among {len(lines)} observations ({len(conflicts) / len(lines):.4f}); "
          f"outcomes {dict(sorted(outcomes.items()))}")
    for c in conflicts[: a.show]:
        side = c["candidate_memories"][0]
        print(f"\n  new: {text.get(c['incoming'])}\n  old: {side['text']}\n  why: {side.get('reason')}")


main()
