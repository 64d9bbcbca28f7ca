"""A small reader for the Princeton WordNet 3.0 database files (wndb(5WN), cntlist(5WN)).

Standard library only. Reads data.{noun,verb,adj,adv}, index.{noun,verb,adj,adv}, cntlist.rev and
the *.exc exception lists from one directory (Debian's wordnet-base puts them in
/usr/share/wordnet).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

POS_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
# ss_type -> the synset type number used in sense keys (wndb(5WN), senseidx(5WN))
SS_TYPE_NUM = {"n": 1, "v": 2, "a": 3, "r": 4, "s": 5}
# lexicographer file names (lexnames(5WN)), by number
LEXNAMES = [
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal", "noun.artifact",
    "noun.attribute", "noun.body", "noun.cognition", "noun.communication", "noun.event",
    "noun.feeling", "noun.food", "noun.group", "noun.location", "noun.motive", "noun.object",
    "noun.person", "noun.phenomenon", "noun.plant", "noun.possession", "noun.process",
    "noun.quantity", "noun.relation", "noun.shape", "noun.state", "noun.substance", "noun.time",
    "verb.body", "verb.change", "verb.cognition", "verb.communication", "verb.competition",
    "verb.consumption", "verb.contact", "verb.creation", "verb.emotion", "verb.motion",
    "verb.perception", "verb.possession", "verb.social", "verb.stative", "verb.weather",
    "adj.ppl",
]
_ADJ_MARKER = re.compile(r"\((?:a|p|ip)\)$")


@dataclass
class Pointer:
    symbol: str
    target: tuple  # (pos, offset) with pos in n v a r
    source_word: int  # 1-based lemma number in the source synset, 0 = whole synset
    target_word: int  # 1-based lemma number in the target synset, 0 = whole synset


@dataclass
class Synset:
    pos: str  # n v a r ('s' satellites are stored as 'a', see ss_type)
    offset: int
    ss_type: str  # n v a s r
    lex_filenum: int
    words: list  # [(lemma as written, with '_'), lex_id int]
    pointers: list = field(default_factory=list)
    gloss: str = ""

    @property
    def key(self) -> tuple:
        return (self.pos, self.offset)

    @property
    def lexname(self) -> str:
        return LEXNAMES[self.lex_filenum]

    def name(self) -> str:
        return f"{self.words[0][0]}.{self.pos}.{self.offset:08d}"


def _norm_pos(p: str) -> str:
    return "a" if p == "s" else p


class WordNet:
    def __init__(self, directory: str):
        self.dir = directory
        self.synsets: dict[tuple, Synset] = {}
        # lowercase lemma (with '_') -> pos -> [synset offsets in sense order]
        self.index: dict[str, dict[str, list[int]]] = {}
        self.tag_counts: dict[str, int] = {}  # sense key -> tag count (cntlist.rev)
        self.exceptions: dict[str, dict[str, list[str]]] = {}  # pos -> inflected -> bases
        for pos, name in POS_FILES.items():
            self._read_data(pos, os.path.join(directory, f"data.{name}"))
            self._read_index(pos, os.path.join(directory, f"index.{name}"))
            self._read_exc(pos, os.path.join(directory, f"{name}.exc"))
        self._read_cntlist(os.path.join(directory, "cntlist.rev"))
        self._inverse = None

    # -- parsing ---------------------------------------------------------------------------

    def _read_data(self, pos: str, path: str) -> None:
        with open(path, encoding="latin-1") as f:
            for line in f:
                if line.startswith("  "):
                    continue  # licence header
                body, _, gloss = line.partition("|")
                t = body.split()
                offset, lex_filenum, ss_type = int(t[0]), int(t[1]), t[2]
                w_cnt = int(t[3], 16)
                i = 4
                words = []
                for _ in range(w_cnt):
                    lemma = _ADJ_MARKER.sub("", t[i])
                    words.append((lemma, int(t[i + 1], 16)))
                    i += 2
                p_cnt = int(t[i])
                i += 1
                ptrs = []
                for _ in range(p_cnt):
                    sym, off, p, st = t[i], int(t[i + 1]), _norm_pos(t[i + 2]), t[i + 3]
                    ptrs.append(Pointer(sym, (p, off), int(st[:2], 16), int(st[2:], 16)))
                    i += 4
                self.synsets[(pos, offset)] = Synset(
                    pos, offset, ss_type, lex_filenum, words, ptrs, gloss.strip()
                )

    def _read_index(self, pos: str, path: str) -> None:
        with open(path, encoding="latin-1") as f:
            for line in f:
                if line.startswith("  "):
                    continue
                t = line.split()
                lemma, synset_cnt, p_cnt = t[0], int(t[2]), int(t[3])
                offs = [int(x) for x in t[4 + p_cnt + 2:]]
                assert len(offs) == synset_cnt, line
                self.index.setdefault(lemma, {})[pos] = offs

    def _read_exc(self, pos: str, path: str) -> None:
        d = self.exceptions.setdefault(pos, {})
        with open(path, encoding="latin-1") as f:
            for line in f:
                t = line.split()
                if len(t) >= 2:
                    d.setdefault(t[0], []).extend(t[1:])

    def _read_cntlist(self, path: str) -> None:
        with open(path, encoding="latin-1") as f:
            for line in f:
                t = line.split()
                if len(t) == 3:
                    self.tag_counts[t[0]] = int(t[2])

    # -- lookups ---------------------------------------------------------------------------

    def synset(self, pos: str, offset: int) -> Synset:
        return self.synsets[(pos, offset)]

    def senses(self, lemma: str, pos: str | None = None) -> list[Synset]:
        """Synsets of a lemma in WordNet's sense order (most frequent first)."""
        lemma = lemma.lower().replace(" ", "_")
        by_pos = self.index.get(lemma, {})
        out = []
        for p in ([pos] if pos else ["n", "v", "a", "r"]):
            out.extend(self.synsets[(p, o)] for o in by_pos.get(p, []))
        return out

    def targets(self, s: Synset, *symbols: str) -> list[Synset]:
        return [self.synsets[p.target] for p in s.pointers if p.symbol in symbols]

    def closure(self, roots, symbols=("~", "~i")) -> dict[tuple, Synset]:
        """The roots and everything reachable from them through `symbols`, transitively."""
        seen: dict[tuple, Synset] = {}
        stack = list(roots)
        while stack:
            s = stack.pop()
            if s.key in seen:
                continue
            seen[s.key] = s
            stack.extend(self.targets(s, *symbols))
        return seen

    def head_of(self, s: Synset) -> Synset | None:
        """The head synset of an adjective satellite (its `&` target that is not a satellite)."""
        if s.ss_type != "s":
            return None
        for t in self.targets(s, "&"):
            if t.ss_type == "a":
                return t
        return None

    def sense_key(self, s: Synset, word_index: int) -> str:
        lemma, lex_id = s.words[word_index]
        head = ":"
        if s.ss_type == "s":
            h = self.head_of(s)
            if h is not None:
                hl, hid = h.words[0]
                head = f"{hl.lower()}:{hid:02d}"
            else:
                head = ":"
        return f"{lemma.lower()}%{SS_TYPE_NUM[s.ss_type]}:{s.lex_filenum:02d}:{lex_id:02d}:{head}"

    def word_index(self, s: Synset, lemma: str) -> int | None:
        lemma = lemma.lower().replace(" ", "_")
        for i, (w, _) in enumerate(s.words):
            if w.lower() == lemma:
                return i
        return None

    def tag_count(self, s: Synset, lemma: str) -> int:
        i = self.word_index(s, lemma)
        return 0 if i is None else self.tag_counts.get(self.sense_key(s, i), 0)

    def form_in(self, s: Synset, lemma: str) -> str | None:
        """The lemma as written (case, '_') in synset s."""
        i = self.word_index(s, lemma)
        return None if i is None else s.words[i][0]
