#!/usr/bin/env python3
"""Import speed of `memledger import sessions` (docs/performance.md): a Claude Code transcript of
--turns turns (the way Claude Code writes one: text, thinking and tool blocks, tool results) is
imported into a fresh store against a scripted chat model on loopback that answers each chunk at
once with two memories of its own. The import reports its model time; the figure is the turns per
second through the rest of the pipeline (reading, cleaning, chunking, saving, progress events).

    scripts/bench_import.py --bin target/release/memledger --turns 20000
"""
import argparse, http.server, json, os, random, re, subprocess, sys, tempfile, threading, time

WORDS = ("deploy service billing cache queue worker schema migration token budget release branch "
         "staging replica index shard tenant invoice ledger report alert metric pager rollout canary").split()


class Scripted(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
        system, user = body["messages"][0]["content"], body["messages"][1]["content"]
        if system.startswith("You distil durable memories"):
            new = user.split("\nNEW:\n", 1)[1]
            lines = [int(m.group(1)) for m in re.finditer(r"^\[L(\d+)", new, re.M)]
            memories = [{"kind": "fact", "text": f"The {lines[i]} line fact {random.choice(WORDS)} {random.choice(WORDS)} {lines[i] * 7919}",
                         "first_line": lines[i], "last_line": lines[i]} for i in (0, len(lines) // 2)]
            content = json.dumps({"memories": memories})
        else:
            content = json.dumps({"relation": "complementary", "reason": "scripted"})
        answer = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)


def transcript(path, turns):
    rng = random.Random(7)
    t0 = 1_750_000_000
    with open(path, "w") as f:
        for i in range(turns):
            at = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(t0 + 30 * i))
            text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(15, 60)))
            base = {"sessionId": "bench-1", "cwd": "/work/bench", "version": "1.0.98", "timestamp": at}
            if i % 2 == 0:
                f.write(json.dumps({**base, "type": "user", "uuid": f"u{i}", "message": {"role": "user", "content": text}}) + "\n")
            else:
                mid = f"msg_{i}"
                for block in ({"type": "thinking", "thinking": text, "signature": "s"}, {"type": "text", "text": text},
                              {"type": "tool_use", "id": f"t{i}", "name": "Bash", "input": {"command": "ls"}}):
                    f.write(json.dumps({**base, "type": "assistant", "uuid": f"a{i}-{block['type']}",
                                        "message": {"id": mid, "role": "assistant", "content": [block]}}) + "\n")
                f.write(json.dumps({**base, "type": "user", "uuid": f"r{i}", "message": {"role": "user",
                                    "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "ok"}]}}) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--turns", type=int, default=20000)
    a = ap.parse_args()
    root = tempfile.mkdtemp(prefix="bench-import-")
    path = os.path.join(root, "bench-1.jsonl")
    transcript(path, a.turns)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Scripted)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMLEDGER_")}
    env.update({"MEMLEDGER_LLM_URL": f"http://127.0.0.1:{server.server_port}/v1", "MEMLEDGER_LLM_MODEL": "scripted"})
    started = time.time()
    p = subprocess.run([a.bin, "--dir", os.path.join(root, "store"), "--no-server", "--json", "import", "sessions", path],
                       capture_output=True, text=True, env=env)
    wall = time.time() - started
    if p.returncode:
        sys.exit(f"import exited {p.returncode}: {p.stderr[:500]}")
    s = json.loads(p.stdout.splitlines()[-1])["summary"]
    print(json.dumps({"turns": s["turns"], "bytes": os.path.getsize(path), "chunks": s["chunks"], "memories": s["memories"],
                      "elapsed_ms": round(s["elapsed_ms"]), "model_ms": round(s["model_ms"]),
                      "model_ms_per_chunk": round(s["model_ms_per_chunk"] or 0, 2),
                      "turns_per_second_excluding_model": round(s["turns_per_second"]), "wall_s": round(wall, 2)}))
    server.shutdown()


if __name__ == "__main__":
    main()
