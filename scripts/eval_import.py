#!/usr/bin/env python3
"""Extraction quality of `memledger import sessions` on LoCoMo (docs/quality.md, docs/import.md).

Each dialogue session of ../shared/eval/locomo-dev.json (LoCoMo, CC BY-NC 4.0: evaluation only) is
written as a plain transcript (a line naming the session and its date, then one line per turn:
{"speaker", "text", "id"}), each conversation imported into a store of its own with the configured
chat model, and scored against LoCoMo's `observation` facts (gold facts, each with the dialogue
turns that support it):

- matched: the share of gold facts of a session that an imported memory of that session states
  (memledger's own classifier calls the pair `identical`, or, with an embedder configured, their
  cosine is at least 0.85);
- located: of the matched facts, the share whose matching memory's line range covers the fact's
  evidence turn;
- conflicts per 100 memories (pending or settled at once).

    scripts/eval_import.py --bin target/release/memledger ../shared/eval/locomo-dev.json
    scripts/eval_import.py --bin ... --scripted FILE   # a scripted model that answers the gold
                                                       # facts: checks the scoring itself (CI)
    scripts/eval_import.py --bin ... --misses 20 FILE  # and 20 gold facts no memory matched

Without --scripted it needs MEMLEDGER_LLM_URL and MEMLEDGER_LLM_MODEL (and reports the model).
"""
import argparse, http.server, json, math, os, re, subprocess, sys, tempfile, threading, urllib.request
from datetime import datetime, timezone

MONTHS = {m: i + 1 for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"])}


def locomo_time(text):
    """'1:56 pm on 8 May, 2023' → RFC 3339 (UTC)."""
    m = re.match(r"\s*(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})", text, re.I)
    if not m:
        return None
    hour, minute, half, day, month, year = m.groups()
    hour = int(hour) % 12 + (12 if half.lower() == "pm" else 0)
    t = datetime(int(year), MONTHS[month.lower()], int(day), hour, int(minute), tzinfo=timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def sessions(conv):
    """(number, date, turns) of each dialogue session."""
    c = conv["conversation"]
    out = []
    for key in c:
        m = re.fullmatch(r"session_(\d+)", key)
        if m and isinstance(c[key], list):
            n = int(m.group(1))
            out.append((n, locomo_time(c.get(f"session_{n}_date_time", "")), c[key]))
    return sorted(out)


def gold(conv):
    """{session number: [(fact, {evidence ids})]}."""
    out = {}
    for key, by_speaker in conv.get("observation", {}).items():
        n = int(key.split("_")[1])
        for facts in by_speaker.values():
            for fact, ev in facts:
                ev = ev if isinstance(ev, list) else [ev]
                out.setdefault(n, []).append((fact, {e.strip() for e in ev for e in e.split(",")}))
    return out


def write_transcript(path, label, date, turns):
    """A plain transcript; the line of each dialogue id."""
    lines = {}
    with open(path, "w") as f:
        f.write(json.dumps({"session": label, "timestamp": date}) + "\n")
        for i, t in enumerate(turns, start=2):
            f.write(json.dumps({"speaker": t["speaker"], "text": t["text"], "id": t["dia_id"]}) + "\n")
            lines[t["dia_id"]] = i
    return lines


class Scripted(http.server.BaseHTTPRequestHandler):
    """A chat model that answers an extraction prompt with the gold facts whose evidence turns are
    among its NEW turns (each on its evidence lines), and every other prompt with `complementary`."""

    facts = {}  # (session label, line) → [fact]

    def log_message(self, *a):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        system, user = body["messages"][0]["content"], body["messages"][1]["content"]
        if system.startswith("You distil durable memories"):
            label = re.search(r"session (\S+?)(?:,| from)", user).group(1)
            new = user.split("\nNEW:\n", 1)[1]
            memories = []
            for m in re.finditer(r"^\[L(\d+)(?:-(\d+))?\]", new, re.M):
                line = int(m.group(1))
                for fact in self.facts.get((label, line), []):
                    memories.append({"kind": "fact", "text": fact, "first_line": line, "last_line": line})
            content = json.dumps({"memories": memories})
        else:
            content = json.dumps({"relation": "complementary", "reason": "scripted"})
        answer = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


def memledger(b, store, *args, env=None, stdin=None):
    p = subprocess.run([b, "--dir", store, "--no-server", "--json", *args], capture_output=True, text=True,
                       env=env, input=stdin)
    if p.returncode:
        sys.exit(f"memledger {' '.join(args[:2])} exited {p.returncode}: {p.stderr.strip()[:500]}")
    return [json.loads(l) for l in p.stdout.splitlines() if l.strip()]


def embed(texts):
    url, model = os.environ.get("MEMLEDGER_EMBED_URL"), os.environ.get("MEMLEDGER_EMBED_MODEL")
    if not url or not model or not texts:
        return None
    req = urllib.request.Request(url.rstrip("/") + "/embeddings", json.dumps({"model": model, "input": texts}).encode(),
                                 {"content-type": "application/json"})
    data = json.load(urllib.request.urlopen(req, timeout=300))["data"]
    return [d["embedding"] for d in sorted(data, key=lambda d: d.get("index", 0))]


def cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b))
    na, nb = math.sqrt(sum(x * x for x in a)), math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na and nb else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--scripted", action="store_true", help="answer with the gold facts (checks the scoring)")
    ap.add_argument("--max-conversations", type=int, default=0)
    ap.add_argument("--max-sessions", type=int, default=0, help="sessions per conversation (0: all)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--misses", type=int, default=0, help="print this many gold facts no memory matched")
    ap.add_argument("file")
    a = ap.parse_args()
    data = json.load(open(a.file))
    if a.max_conversations:
        data = data[:a.max_conversations]
    env = dict(os.environ)
    server = None
    if a.scripted:
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        env["MEMLEDGER_LLM_URL"] = f"http://127.0.0.1:{server.server_port}/v1"
        env["MEMLEDGER_LLM_MODEL"] = "scripted-gold"
    elif not env.get("MEMLEDGER_LLM_URL") or not env.get("MEMLEDGER_LLM_MODEL"):
        sys.exit("eval_import: set MEMLEDGER_LLM_URL and MEMLEDGER_LLM_MODEL (or --scripted to check the scoring)")
    # The scoring's classifier is the lexical one: no model in its environment.
    lexical = {k: v for k, v in os.environ.items() if not k.startswith("MEMLEDGER_")}
    root = tempfile.mkdtemp(prefix="eval-import-")
    totals = {"gold": 0, "matched": 0, "located": 0, "memories": 0, "conflicts": 0, "turns": 0, "model_ms": 0.0,
              "model_calls": 0}
    misses = []
    for conv in data:
        cid = conv["sample_id"]
        store = os.path.join(root, cid, "store")
        os.makedirs(os.path.dirname(store), exist_ok=True)
        facts = gold(conv)
        files, line_of = [], {}
        for n, date, turns in sessions(conv)[: a.max_sessions or None]:
            label = f"{cid}:{n}"
            path = os.path.join(root, cid, f"session-{n:02d}.jsonl")
            lines = write_transcript(path, label, date, turns)
            line_of[label] = lines
            files.append(path)
            for fact, ev in facts.get(n, []):
                for e in ev:
                    if e in lines:
                        Scripted.facts.setdefault((label, lines[e]), []).append(fact)
        out = memledger(a.bin, store, "import", "sessions", "--agent", "plain", *files, env=env)
        summary = out[-1]["summary"]
        totals["turns"] += summary["turns"]
        totals["model_ms"] += summary["model_ms"]
        totals["model_calls"] += summary["model_calls"]
        imported = [m for m in out[:-1] if m.get("memory_id")]
        totals["memories"] += len(imported)
        conflicts = memledger(a.bin, store, "conflicts", "list", "--status", "all", env=lexical)[0]["conflicts"]
        totals["conflicts"] += len(conflicts)
        # Gold facts against the memories of their own session.
        by_session = {}
        for m in imported:
            by_session.setdefault(m["session"], []).append(m)
        for n, date, turns in sessions(conv)[: a.max_sessions or None]:
            label = f"{cid}:{n}"
            mems = by_session.get(label, [])
            session_facts = facts.get(n, [])
            totals["gold"] += len(session_facts)
            if not mems or not session_facts:
                misses.extend(f"{label}: {fact}" for fact, _ in session_facts)
                continue
            pairs = []
            for i, (fact, _) in enumerate(session_facts):
                for j, m in enumerate(mems):
                    pairs.append(json.dumps({"id": f"{i}:{j}", "a": fact, "b": m["text"]}))
            verdicts = memledger(a.bin, store + "-classify", "classify", "--pairs", "-", env=lexical,
                                 stdin="\n".join(pairs) + "\n")
            same = {tuple(map(int, v["id"].split(":"))) for v in verdicts if v["relation"] == "identical"}
            vectors = embed([f for f, _ in session_facts] + [m["text"] for m in mems])
            if vectors:
                k = len(session_facts)
                for i in range(k):
                    for j in range(len(mems)):
                        if cosine(vectors[i], vectors[k + j]) >= 0.85:
                            same.add((i, j))
            for i, (fact, ev) in enumerate(session_facts):
                matches = [mems[j] for (fi, j) in same if fi == i]
                if not matches:
                    misses.append(f"{label}: {fact}")
                    continue
                totals["matched"] += 1
                lines = {line_of[label][e] for e in ev if e in line_of[label]}
                if any(m["first_line"] <= l <= m["last_line"] for m in matches for l in lines):
                    totals["located"] += 1
    result = {
        "model": env.get("MEMLEDGER_LLM_MODEL"),
        "conversations": len(data),
        "gold_facts": totals["gold"],
        "memories": totals["memories"],
        "matched": totals["matched"] / totals["gold"] if totals["gold"] else 0.0,
        "located": totals["located"] / totals["matched"] if totals["matched"] else 0.0,
        "conflicts_per_100_memories": 100.0 * totals["conflicts"] / totals["memories"] if totals["memories"] else 0.0,
        "turns": totals["turns"],
        "model_ms_per_chunk": totals["model_ms"] / totals["model_calls"] if totals["model_calls"] else None,
        "embedder": os.environ.get("MEMLEDGER_EMBED_MODEL"),
    }
    if server:
        server.shutdown()
    if a.json:
        print(json.dumps(result))
        return
    for miss in misses[: a.misses]:
        print(f"  missed: {miss}")
    print(f"model {result['model']}: {result['conversations']} conversation(s), {result['turns']} turns, "
          f"{result['gold_facts']} gold facts, {result['memories']} memories imported")
    print(f"  matched  {result['matched']:.3f}  (gold facts an imported memory states)")
    print(f"  located  {result['located']:.3f}  (of those, the memory's lines cover the evidence turn)")
    print(f"  conflicts per 100 memories  {result['conflicts_per_100_memories']:.1f}")
    if result["model_ms_per_chunk"] is not None:
        print(f"  model time per chunk  {result['model_ms_per_chunk']:.0f} ms")


if __name__ == "__main__":
    main()
