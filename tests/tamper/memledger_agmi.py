"""The adapter through which agent-memory-integrity (PyPI, module ``agmi``) runs its nine at-rest
attacks against memledger: cli/tests/tamper.rs runs ``agmi-check`` with it.

Each ``setup()`` is a fresh store with a home of its own (so its own signing key and witness).
A record is one `memory_observed` event of scope agmi:A in the `events` column family; the
events the same save appended after it (belief_added, pair_classified: same correlation_id)
belong to it, so deleting a record deletes its whole save.
Raw access: rocksdict (bundles RocksDB 10.4.2, as rust-rocksdb 0.24 does), every column
family opened with LZ4 (memledger's RocksDB is built with LZ4 only: a Snappy SST is unreadable).
Verdict: `memledger --dir STORE --json verify`, exit code != 0 = tampering detected.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile

from agmi.adapters.base import MemoryAdapter, Record
from rocksdict import DBCompressionType, Options, Rdict

BIN = os.environ.get("MEMLEDGER_BIN", "memledger")
SCOPE_A, SCOPE_B = "agmi:A", "agmi:B"   # same length: replayed texts keep the record's size
# No user config, server, shared ledger or model: drop every MEMLEDGER_* but the binary's path.
ENV = {k: v for k, v in os.environ.items() if not k.startswith("MEMLEDGER_")}
ENV["MEMLEDGER_NO_SERVER"] = "1"


def _text(scope_tag: str, i: int) -> str:
    # one length for every i < 10 and both scopes, so a replayed text fits in place
    return f"agmi-{scope_tag}-{i}: the deploy limit is {40 + i} requests"


# --- the stored form (docs/format.md): format u16 ‖ bincode(Event), big-endian fixint -----------
class _Cur:
    def __init__(self, b: bytes, off: int = 0):
        self.b, self.off = b, off

    def take(self, n: int) -> bytes:
        s = self.b[self.off:self.off + n]
        self.off += n
        return s

    def u(self, n: int) -> int:
        return int.from_bytes(self.take(n), "big")

    def string(self) -> tuple[int, str]:
        at = self.off
        return at, self.take(self.u(8)).decode()

    def opt(self, inner):
        return inner() if self.u(1) else None


def parse(value: bytes) -> dict:
    c = _Cur(value, 2)
    ev = {"format": int.from_bytes(value[:2], "big"), "seq": c.u(8)}
    c.take(16 + 2)                                     # event_id, format
    ev["recorded_at_off"] = c.off
    ev["recorded_at"] = int.from_bytes(c.take(8), "big", signed=True)
    ev["actor"] = c.string()[1]
    ev["correlation_id"] = c.take(16).hex()
    c.opt(lambda: c.u(8))                              # causation
    c.opt(c.string)                                    # idempotency_key
    ev["prev_hash"] = c.take(32).hex()
    if ev["format"] >= 5:
        c.opt(c.string)                                # principal
    ev["hash"] = c.take(32).hex()
    ev["variant"] = c.u(4)
    if ev["variant"] == 0:                             # memory_observed
        c.take(16)                                     # memory_id
        ev["text_off"], ev["text"] = c.string()
        c.u(4)                                         # memory_type
        ev["scope_off"], ev["scope"] = c.string()
    return ev


class MemledgerAdapter(MemoryAdapter):
    name = "memledger"
    detection_point = "audit"          # `verify` is a separate call; see the notes
    supports_replay = True
    supports_metadata = True
    supports_snapshot = True

    def __init__(self):
        self.dir: str | None = None

    # --- lifecycle and the tool's own API -------------------------------------------------------
    def setup(self):
        self.dir = tempfile.mkdtemp(prefix="agmi-memledger-")
        self.store = os.path.join(self.dir, "store")
        self._env = {**ENV, "HOME": self.dir, "XDG_CONFIG_HOME": self.dir}

    def teardown(self):
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None

    def _ml(self, *args, check=True):
        p = subprocess.run([BIN, "--dir", self.store, "--no-server", "--json", *args],
                           capture_output=True, text=True, env=self._env, timeout=120)
        if check and p.returncode != 0:
            raise RuntimeError(f"memledger {args[0]} exit {p.returncode}: {p.stderr.strip()[:300]}")
        return p

    def _save(self, scope, tag, i):
        self._ml("save", "--scope", scope, _text(tag, i))

    def seed(self, n):
        for i in range(n):
            self._save(SCOPE_A, "A", i)

    def seed_other(self, n):
        for i in range(n):
            self._save(SCOPE_B, "B", i)

    def append_genuine(self):
        self._save(SCOPE_A, "A", len(self.read_all_raw()))

    def reload(self):
        pass                       # every CLI call opens the store afresh (and runs its open checks)

    def verify(self) -> bool:
        self.verify_detail = None
        p = self._ml("verify", check=False)
        if p.returncode == 0:
            return True
        try:
            r = json.loads(p.stdout.splitlines()[0])
            self.verify_detail = f"seq {r.get('first_bad_seq')}: {r.get('problem')}; views {r.get('inconsistent_views')}"
        except (ValueError, IndexError):
            self.verify_detail = (p.stderr.strip().splitlines() or [f"exit {p.returncode}"])[-1][:200]
        return False

    # --- raw access -----------------------------------------------------------------------------
    def _open(self) -> Rdict:
        def opts():
            o = Options(raw_mode=True)
            o.set_compression_type(DBCompressionType.lz4())
            return o
        cfs = {n: opts() for n in Rdict.list_cf(self.store) if n != "default"}
        return Rdict(self.store, options=opts(), column_families=cfs)

    def _events(self) -> list[tuple[int, bytes]]:
        db = self._open()
        try:
            return [(int.from_bytes(k, "big"), bytes(v)) for k, v in db.get_column_family("events").items()]
        finally:
            db.close()

    def _edit(self, puts=(), deletes=()):
        db = self._open()
        try:
            ev = db.get_column_family("events")
            for seq, value in puts:
                ev[seq.to_bytes(8, "big")] = value
            for seq in deletes:
                del ev[seq.to_bytes(8, "big")]
            ev.flush()
        finally:
            db.close()

    def _records(self, scope) -> list[Record]:
        out = []
        for key, value in self._events():
            try:
                ev = parse(value)
            except Exception:          # noqa: BLE001 - an unparsable row is no observation
                continue
            if ev["variant"] == 0 and ev["scope"] == scope:
                out.append(Record(seq=key, fields={"key": key, "value": value.hex(), "text": ev["text"],
                                                   "scope": ev["scope"], "recorded_at": ev["recorded_at"],
                                                   "correlation_id": ev["correlation_id"]}))
        return out

    def read_all_raw(self):
        return self._records(SCOPE_A)

    def read_other_raw(self):
        return self._records(SCOPE_B)

    def write_raw(self, record):
        self._edit(puts=[(record.seq, bytes.fromhex(record.fields["value"]))])

    def delete_raw(self, seq):
        events = self._events()
        corr = parse(dict(events)[seq])["correlation_id"]
        self._edit(deletes=[k for k, v in events if k >= seq and parse(v)["correlation_id"] == corr])

    @staticmethod
    def _with_text(value: bytes, text: str) -> bytes:
        ev, new = parse(value), text.encode()
        old_len = len(ev["text"].encode())
        assert len(new) == old_len, "same-length texts only (no re-encoding)"
        start = ev["text_off"] + 8
        return value[:start] + new + value[start + old_len:]

    def mutate_payload(self, record):
        value = bytes.fromhex(record.fields["value"])
        text = record.fields["text"].replace("limit is", "limit XX")
        record.fields.update(value=self._with_text(value, text).hex(), text=text)
        return record

    def forge_record(self, template):
        last = max(k for k, _ in self._events())
        value = bytearray(self._with_text(bytes.fromhex(template.fields["value"]), _text("A", 9)))
        value[2:10] = (last + 1).to_bytes(8, "big")   # the key it sits under; prev_hash, hash copied
        return Record(seq=last + 1, fields={**template.fields, "key": last + 1, "value": value.hex()})

    def replay_onto(self, victim_seq, donor):
        victim = dict(self._events())[victim_seq]
        self._edit(puts=[(victim_seq, self._with_text(victim, donor.fields["text"]))])

    def read_meta(self, seq):
        ev = parse(dict(self._events())[seq])
        return {"recorded_at": ev["recorded_at"], "actor": ev["actor"]}

    def write_meta(self, seq, meta):
        value = bytearray(dict(self._events())[seq])
        off = parse(bytes(value))["recorded_at_off"]
        at = meta["recorded_at"] + (3_600_000_000 if meta.get("agmi_meta_tampered") else 0)
        value[off:off + 8] = at.to_bytes(8, "big", signed=True)
        self._edit(puts=[(seq, bytes(value))])

    # --- guard hooks: slot = key, content = text, owner = scope -----------------------------------
    def identity_of(self, record):
        return str(record.fields["key"])

    def payload_of(self, record):
        return record.fields["text"]

    def owner_of(self, record):
        return record.fields["scope"]

    # --- T9: the whole store directory -----------------------------------------------------------
    def snapshot_store(self):
        return self._copy_store(self.store)

    def restore_store(self, token):
        self._restore_store(token, self.store)
        shutil.rmtree(os.path.dirname(token), ignore_errors=True)
