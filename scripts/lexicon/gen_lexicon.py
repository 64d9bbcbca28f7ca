#!/usr/bin/env python3
"""Generate memledger's lexical-classifier lexicon from Princeton WordNet 3.0.

    python3 scripts/lexicon/gen_lexicon.py [--wordnet /usr/share/wordnet] \
        [--out engine/src/classify/lexicon] [--quiet]

Writes, into --out:
  categories.tsv   surface <TAB> category <TAB> canonical <TAB> case (cap|any)
  antonyms.tsv     word <TAB> word <TAB> pos (n|v|a|r, or s for an adjective satellite that
                   inherits its head's antonym)
  broader.tsv      category <TAB> canonical <TAB> broader canonical (same category)
  irregular.tsv    inflected <TAB> base <TAB> pos (n|v), from WordNet's exception lists
  WORDNET-LICENSE  the WordNet 3.0 licence

Standard library only; the output is deterministic (sorted, no timestamps). The database comes
from Debian's `wordnet-base` package (WordNet 3.0). See scripts/lexicon/README.md for the
categories' anchor synsets, the filters and their reasons.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections import defaultdict
from dataclasses import dataclass, field

sys.dont_write_bytecode = True  # leave no __pycache__ in the repository
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from wordnet import WordNet  # noqa: E402

COMMAND = "python3 scripts/lexicon/gen_lexicon.py --wordnet /usr/share/wordnet --out engine/src/classify/lexicon"

# ---------------------------------------------------------------------------------------------
# Categories
# ---------------------------------------------------------------------------------------------
# An anchor is (pos, offset, first lemma); the lemma is checked so that a different WordNet
# version fails loudly instead of silently anchoring somewhere else.


@dataclass
class Category:
    name: str
    anchors: list  # [(pos, offset, first_lemma)]
    # "hyponyms": every synset below the anchors through `~` (hyponym) pointers, transitively;
    # "instances": only instance synsets (reached through `~i`, below any hyponym of an anchor);
    # "both": hyponyms and instances.
    mode: str = "hyponyms"
    exclude: list = field(default_factory=list)  # [(pos, offset, first_lemma)] whole subtrees
    # synsets kept although their subtree is not: (pos, offset, first_lemma), anchor included
    extra: list = field(default_factory=list)
    include_anchor: bool = False
    max_depth: int | None = None  # hyponym levels below the anchor
    case: str = "mixed"  # "cap": only capitalised lemmas (proper names); "lower": only lowercase
    drop_lemma: str | None = None  # regex (on the WordNet lemma) of class/unit lemmas to skip
    fold: bool = False  # fold adjective pertainyms and member (#m) demonyms/adherents into it
    adj_heads: list = field(default_factory=list)  # adjective heads whose satellites are members
    # ... and the head adjectives with an attribute (`=`) pointer (white, black) are candidates too
    attribute_adjs: bool = False
    # other senses of a member's lemma, in these lexicographer files, name the same value
    # (north: the compass point, the direction, the adjective, the adverb, the region)
    same_lemma: tuple = ()
    place: bool = False  # a geographic name: other place senses (island, river) are not rivals
    description: str = ""


N = "n"
CATEGORIES = [
    Category(
        "colour",
        [(N, 4959672, "chromatic_color"), (N, 4960079, "achromatic_color")],
        exclude=[(N, 4975739, "complementary_color"), (N, 4974575, "pastel"),
                 (N, 4966017, "blond")],
        case="lower",
        drop_lemma=r"ness$",
        adj_heads=[("a", 366691, "chromatic"), ("a", 386392, "achromatic")],
        attribute_adjs=True,
        description="chromatic colours (hue) and achromatic colours (white, black, grey)",
    ),
    Category(
        "country",
        [(N, 8544813, "country")],
        place=True,
        mode="instances",
        case="cap",
        fold=True,
        description="countries/nations (instances of country, state, land); nationality adjectives "
        "and demonyms folded in",
    ),
    Category(
        "state_province",
        [(N, 8654360, "state")],
        place=True,
        mode="instances",
        case="cap",
        fold=True,
        description="first-level divisions: US states, Canadian provinces, Australian states, "
        "Indian states, Chinese provinces...",
    ),
    Category(
        "city",
        [(N, 8524735, "city")],
        place=True,
        mode="instances",
        case="cap",
        fold=True,
        description="cities WordNet lists as instances of city (capitals, ports included)",
    ),
    Category(
        "continent",
        [(N, 9254614, "continent")],
        place=True,
        mode="instances",
        case="cap",
        fold=True,
        description="continents",
    ),
    Category(
        "ocean",
        [(N, 9376198, "ocean")],
        place=True,
        mode="instances",
        case="cap",
        description="oceans",
    ),
    Category(
        "language",
        [(N, 6904171, "natural_language")],
        case="cap",
        drop_lemma=r"(^|_)(language|languages|dialect)$",
        description="natural languages (families and dialects included; capitalised names only)",
    ),
    Category(
        "religion",
        [(N, 5946687, "religion"), (N, 8081668, "religion")],
        exclude=[(N, 8149781, "sect"), (N, 5942104, "apophatism"), (N, 5942338, "cataphatism"),
                 (N, 5942579, "doctrine_of_analogy"), (N, 5948716, "ecclesiasticism"),
                 (N, 5949472, "revealed_religion"), (N, 8100778, "established_church")],
        fold=True,
        description="religions (beliefs and organised religions); adherents (#m) and pertainym "
        "adjectives folded in",
    ),
    Category(
        "material",
        [(N, 3309808, "fabric"), (N, 14625458, "metallic_element"), (N, 14586769, "alloy"),
         (N, 15098161, "wood"), (N, 14696793, "rock"), (N, 14592610, "plastic"),
         (N, 14759722, "leather"), (N, 14881303, "glass"), (N, 14786479, "building_material"),
         (N, 15006258, "rubber"), (N, 14959234, "natural_fiber"),
         (N, 14959058, "man-made_fiber")],
        include_anchor=True,
        # "made from or consisting of" adjectives similar to `metallic` that are named like a
        # metal (gold, silver, bronze): the metal as a modifier ("silver bracelets")
        adj_heads=[("a", 1527420, "metallic")],
        exclude=[(N, 3933183, "piece_of_leather"), (N, 3932670, "piece_of_cloth"),
                 (N, 3819595, "net"), (N, 2952109, "canopy"), (N, 3188725, "diaper"),
                 (N, 3233123, "drapery"), (N, 4198453, "shirttail"), (N, 4613015, "yoke"),
                 (N, 4594742, "wire_cloth"), (N, 4153330, "screening"), (N, 4568713, "web"),
                 (N, 4326084, "stone"),
                 (N, 2914813, "building_block"), (N, 4322387, "stock"), (N, 4339638, "strip"),
                 (N, 15050320, "staff"), (N, 15060569, "sticks_and_stone"),
                 (N, 14942762, "log"), (N, 15102712, "knot"), (N, 13166191, "burl"),
                 (N, 14992945, "puddle")],
        case="lower",
        description="materials: fabrics and fibres, metals and alloys, woods, stones, plastics, "
        "leathers, glass, building materials, rubber",
    ),
    Category(
        "room",
        # rooms, and the storeys of a house WordNet files under floor/level/storey rather than
        # room (basement/cellar, attic/loft, ground floor, mezzanine); the anchors' own lemmas
        # are not values
        [(N, 4105893, "room"), (N, 3365991, "floor")],
        exclude=[(N, 3079741, "compartment"), (N, 3222176, "door"), (N, 3366301, "floor"),
                 (N, 2991555, "cell"), (N, 3144365, "cubby"), (N, 4055595, "rathole")],
        # where one is in a house or at work, filed elsewhere in WordNet: the garage (an
        # outbuilding), the hallway (a corridor), the office (a place of business)
        extra=[(N, 3416489, "garage"), (N, 3479952, "hallway"), (N, 3841666, "office")],
        case="lower",
        description="rooms and storeys of a building",
    ),
    Category(
        "drink",
        [(N, 7881800, "beverage")],
        # WordNet files water and juice as a liquid and a foodstuff, not under beverage: the
        # drinking sense of water (noun.food), water the substance (H2O, the sense SemCor tags
        # in "a drink of water") and juice
        extra=[(N, 7935504, "water"), (N, 14845743, "water"), (N, 7923748, "juice")],
        case="lower",
        description="beverages",
    ),
    Category(
        "musical_instrument",
        [(N, 3800933, "musical_instrument")],
        case="lower",
        drop_lemma=r"(^|_)instrument$",
        description="musical instruments",
    ),
    Category(
        "planet",
        [(N, 9394007, "planet")],
        mode="instances",
        case="cap",
        description="the planets of the solar system",
    ),
    Category(
        "zodiac_sign",
        [(N, 8685677, "sign_of_the_zodiac")],
        mode="instances",
        same_lemma=("noun.person", "noun.object"),
        case="cap",
        description="signs of the zodiac",
    ),
    Category(
        "compass_direction",
        [(N, 13830305, "compass_point")],
        exclude=[(N, 13831000, "cardinal_compass_point")],
        extra=[(N, 13831176, "north"), (N, 13832355, "east"), (N, 13833375, "south"),
               (N, 13834399, "west")],
        same_lemma=("noun.relation", "noun.location", "adj.all", "adv.all"),
        case="lower",
        description="compass points",
    ),
    Category(
        "sport",
        [(N, 523513, "sport")],
        case="lower",
        drop_lemma=r"(^|_)sport$",
        description="sports",
    ),
    Category(
        "game",
        [(N, 502415, "board_game"), (N, 488225, "card_game"), (N, 483935, "child's_game"),
         (N, 499066, "table_game")],
        case="mixed",
        description="board games, card games, table games, children's games",
    ),
    Category(
        "occupation",
        [(N, 10605985, "skilled_worker"), (N, 10480253, "professional"),
         (N, 9614315, "creator"), (N, 10560637, "scientist"), (N, 9615807, "engineer"),
         (N, 9616922, "entertainer"), (N, 10053808, "employee"), (N, 10794014, "writer"),
         (N, 9927451, "clergyman"), (N, 9882716, "businessperson"),
         (N, 9770949, "administrator"), (N, 10249459, "lawman"), (N, 10090020, "financier"),
         (N, 10631941, "specialist"), (N, 10707233, "therapist"), (N, 10378412, "operator"),
         (N, 10725280, "translator"), (N, 10212501, "interpreter"),
         (N, 9790482, "analyst"), (N, 9791530, "analyst"), (N, 10091651, "fireman")],
        include_anchor=True,
        case="lower",
        description="persons by occupation",
    ),
    Category(
        "music_genre",
        [(N, 7071942, "music_genre")],
        case="lower",
        description="musical genres",
    ),
    Category(
        "literary_genre",
        [(N, 7092158, "writing_style"), (N, 6367107, "fiction")],
        exclude=[(N, 7092356, "form"), (N, 6373314, "plot")],
        case="lower",
        description="literary genres (drama, prose, poetry, fiction and their kinds)",
    ),
    Category(
        "season",
        [(N, 15236475, "season")],
        exclude=[(N, 921790, "harvest"), (N, 921926, "haying")],
        case="lower",
        description="seasons of the year",
    ),
    Category(
        "meal",
        [(N, 7573696, "meal")],
        exclude=[(N, 7565608, "mess"), (N, 7573563, "square_meal"), (N, 7574426, "refection"),
                 (N, 7577657, "nosh-up")],
        case="lower",
        description="meals",
    ),
    Category(
        "cuisine",
        [(N, 7571324, "cuisine")],
        case="lower",
        description="cuisines as WordNet has them (few: haute cuisine, nouvelle cuisine...)",
    ),
    Category(
        "vehicle",
        [(N, 4524313, "vehicle"), (N, 4019101, "public_transport")],
        case="lower",
        drop_lemma=r"(^|_)vehicle$",
        description="vehicles and public transport (bus, train)",
    ),
    Category(
        "animal",
        [(N, 1317541, "domestic_animal")],
        max_depth=1,
        exclude=[(N, 1317813, "feeder"), (N, 1318053, "stocker"), (N, 1318381, "head")],
        extra=[(N, 2374451, "horse"), (N, 2402425, "cattle"), (N, 2403454, "cow"),
               (N, 2411705, "sheep"), (N, 2416519, "goat"), (N, 2395406, "hog"),
               (N, 1791625, "chicken"), (N, 2324045, "rabbit"), (N, 2342885, "hamster"),
               (N, 2364673, "guinea_pig"), (N, 2389559, "domestic_ass"), (N, 1846331, "duck"),
               (N, 1855672, "goose"), (N, 1794158, "turkey"), (N, 1816887, "parrot"),
               (N, 1443537, "goldfish"), (N, 2330245, "mouse"), (N, 2121620, "cat")],
        case="lower",
        description="common domestic animals (direct hyponyms of domestic_animal and a few farm "
        "and pet animals)",
    ),
    Category(
        "dog_breed",
        [(N, 2084071, "dog")],
        exclude=[(N, 1322604, "puppy"), (N, 2084732, "pooch"), (N, 2084861, "cur"),
                 (N, 2085272, "lapdog")],
        drop_lemma=r"(^|_)dog$",
        description="dog breeds (hyponyms of dog)",
    ),
    Category(
        "fruit",
        [(N, 7705931, "edible_fruit")],
        case="lower",
        description="edible fruits",
    ),
    Category(
        "vegetable",
        [(N, 7707451, "vegetable")],
        case="lower",
        description="vegetables",
    ),
    Category(
        "flower",
        [(N, 11669921, "flower")],
        case="lower",
        description="flowers (plants cultivated for their blooms)",
    ),
    Category(
        "tree",
        [(N, 13104059, "tree")],
        case="lower",
        drop_lemma=r"(^|_)tree$",
        description="trees",
    ),
    Category(
        "gemstone",
        [(N, 14699752, "gem")],
        exclude=[(N, 14700046, "cabochon")],
        case="lower",
        drop_lemma=r"(^|_)gem$",
        description="gemstones",
    ),
    Category(
        "cheese",
        [(N, 7850329, "cheese")],
        case="mixed",
        description="cheeses",
    ),
    Category(
        "currency",
        [(N, 13604718, "monetary_unit")],
        case="mixed",
        drop_lemma=r"(^|_)(monetary_unit|subunit)$",
        description="currencies (monetary units and their subunits)",
    ),
    Category(
        "dance",
        [(N, 428270, "dancing")],
        exclude=[(N, 527061, "phrase"), (N, 529101, "pas_seul")],
        case="mixed",
        description="dances",
    ),
    Category(
        "academic_discipline",
        [(N, 5996646, "discipline")],
        exclude=[(N, 6157326, "performing_arts"), (N, 6156968, "fine_arts"),
                 (N, 5997659, "major"), (N, 5998052, "frontier"), (N, 5968450, "occultism"),
                 (N, 6154464, "neoclassicism"), (N, 6154724, "classicism"),
                 (N, 6155075, "Romanticism"), (N, 6158057, "Occidentalism"),
                 (N, 6172071, "trivium"), (N, 6172294, "quadrivium")],
        case="lower",
        description="branches of knowledge (sciences, humanities, engineering...)",
    ),
]

# Categories whose senses are pooled for the ambiguity test and which may both list a
# capitalised surface: a nationality word is in `country` (folded) and the language of the same
# name in `language` ("French": france / french).
FOLD_GROUPS = [{"country", "language"}]

# Categories that may both list a capitalised surface (one line each): the fold groups, and a
# country that is also a continent of the same name (Australia). The lines of a surface come in
# the order of CATEGORIES (country first), which is the order the classifier meets them in.
PAIR_GROUPS = FOLD_GROUPS + [{"country", "continent"}]

# Categories whose senses of one word are regular polysemy, not rivals: the wood and the tree
# (oak, pine), the fruit and the tree (apricot). They are pooled for the share test; the word
# goes to the one with the larger tag count.
RELATED_GROUPS = [{"material", "tree"}, {"fruit", "tree"}]

# English stop words and other function words (never entries). Compiled by hand from the usual
# lists (articles, pronouns, auxiliaries, modals, prepositions, conjunctions, determiners).
STOP_WORDS = set("""
a about above across after afterwards again against all almost alone along already also although
always am among amongst an and another any anybody anyhow anyone anything anyway anywhere are
around as at back be became because become becomes becoming been before beforehand behind being
below beside besides between beyond both but by can cannot could did do does doing done down
during each either else elsewhere enough even ever every everybody everyone everything everywhere
except few for former formerly from further had has have having he hence her here hereafter
hereby herein hers herself him himself his how however i if in indeed into is it its itself just
last latter least less many may me meanwhile might mine more moreover most mostly much must my
myself neither never nevertheless next no nobody none nor not nothing now nowhere of off often on
once one only onto or other others otherwise our ours ourselves out over own per perhaps rather
same shall she should since so some somebody someone something sometime sometimes somewhere still
such than that the their theirs them themselves then thence there thereafter thereby therefore
therein these they this those though through throughout thus to together too toward towards under
until up upon us very via was we well were what whatever when whence whenever where whereas
whereby wherein whether which while whither who whoever whole whom whose why will with within
without would yet you your yours yourself yourselves
""".split())

# The ambiguity rule for `any` entries (lowercase category lemmas; judge_any). A word's senses
# are all its senses in the four parts of speech with their SemCor tag counts; WordNet lists
# the senses of each part of speech by those counts, the most frequent first. A surface is kept
# in a category when
#   1. it is not an irregular inflection of another word (rose, found, left); an -ing form is
#      judged as the gerund noun when the category sense is a noun (swimming);
#   2. tagged words: the category's sense is the dominant one, either
#      a. by share: the category holds at least half of the tagged uses (SHARE_ANY) and a most
#         tagged sense, or
#      b. by rank: a category sense is the word's first sense in its part of speech, the parts
#         of speech where a category sense comes first hold at least as many tagged uses as the
#         others together (a noun used more as a verb or an adjective is out: fall, judge,
#         train, general), and the category holds at least a third of the uses (DOMINANT_MIN)
#         (library 3 of 7: room, collection, building; nurse 2 of 6; not bar 10 of 37);
#      and no other category holds more than a quarter of the uses (OTHER_CAT_MAX: orange,
#      colour 10 and fruit 5, is neither); and if capitalised noun senses (people, places)
#      share the name, the category is tagged at least CAP_HOMOGRAPH_MIN times or there is
#      one such name (Wood the actress, painter, conductor and writer vs wood 14);
#   3. untagged words: a category sense is among the first UNTAGGED_RANK senses of its part of
#      speech, at most UNTAGGED_MAX_SENSES senses, no sense in another part of speech except
#      verbs derived from the category sense (to motorcycle), no capitalised noun sense.
# A verb reading in a text ("water the plants") rarely fills the slot a category value fills,
# so the verb senses only matter when they outweigh the noun; an adjective reading does fill it
# ("the meeting is private"), hence the comparison with all other parts of speech.
SHARE_ANY = 0.5  # `any` entries: category share of the surface's tagged senses, all POS
DOMINANT_MIN = 1 / 3  # `any` entries kept as a first sense: at least this share of the uses
OTHER_CAT_MAX = 0.25  # `any` entries: share another category may hold (orange: fruit/colour)
SHARE_CAP = 0.5  # `cap` entries: category share among the surface's capitalised senses
CAP_HOMOGRAPH_MIN = 3  # `any` entries with a capitalised homograph need this category tag count
UNTAGGED_RANK = 2  # untagged `any` entries: category sense among the first 2 of its POS
UNTAGGED_MAX_SENSES = 3  # ... and the word has at most 3 senses
LOWER_VS_CAP = 3  # `cap` entries: lowercase tag weight at most this times the capitalised one
LOWER_FLOOR = 0  # ... or at most this much when the capitalised senses are untagged

SURFACE_RE = re.compile(r"[a-z][a-z'\-]*(?: [a-z][a-z'\-]*){0,2}")


def surface_of(lemma: str) -> str | None:
    s = lemma.replace("_", " ").lower()
    if not SURFACE_RE.fullmatch(s):
        return None
    if len(s.replace(" ", "").replace("-", "").replace("'", "")) <= 2:
        return None
    if s in STOP_WORDS:
        return None
    return s


def is_cap(lemma: str) -> bool:
    return any(c.isupper() for c in lemma)


# ---------------------------------------------------------------------------------------------
# Building the categories
# ---------------------------------------------------------------------------------------------


class Builder:
    def __init__(self, wn: WordNet):
        self.wn = wn
        self.current_keys = set()
        for s in wn.synsets.values():
            for i in range(len(s.words)):
                self.current_keys.add(wn.sense_key(s, i))
        # cntlist.rev keys that name no WordNet 3.0 sense (older versions' senses, e.g. the modal
        # `may`): their counts still say a lemma is used otherwise, so they count against it.
        self.stale = defaultdict(int)
        for k, c in wn.tag_counts.items():
            if k not in self.current_keys:
                self.stale[k.split("%")[0]] += c
        # inflected forms: surface -> bases, from the *.exc lists (rose -> rise, found -> find)
        self.inflected = defaultdict(set)
        for pos, d in wn.exceptions.items():
            for form, bases in d.items():
                for b in bases:
                    if b != form:
                        self.inflected[form.replace("_", " ")].add(b)

    def anchor(self, a):
        pos, off, lemma = a
        s = self.wn.synset(pos, off)
        if s.words[0][0] != lemma:
            raise SystemExit(f"anchor {pos}{off:08d}: expected {lemma}, found {s.words[0][0]}")
        return s

    def members(self, cat: Category) -> dict:
        """synset key -> depth below its anchor"""
        excluded = {self.anchor(e).key for e in cat.exclude}
        out = {}
        for a in cat.anchors:
            root = self.anchor(a)
            stack = [(root, 0)]
            seen = set()
            while stack:
                s, d = stack.pop()
                if s.key in seen or s.key in excluded:
                    continue
                seen.add(s.key)
                inst = any(p.symbol == "@i" for p in s.pointers)
                take = s is not root or cat.include_anchor
                if cat.mode == "instances":
                    take = take and inst
                elif cat.mode == "hyponyms":
                    take = take and not inst
                if take and (s.key not in out or out[s.key] > d):
                    out[s.key] = d
                if cat.max_depth is not None and d >= cat.max_depth:
                    continue
                if inst and cat.mode != "hyponyms":
                    continue  # what hangs below an instance is not an instance of the anchor
                syms = ("~",) if cat.mode == "hyponyms" else ("~", "~i")
                for t in self.wn.targets(s, *syms):
                    stack.append((t, d + 1))
        for e in cat.extra:
            out.setdefault(self.anchor(e).key, 0)
        return out

    def canonical(self, s) -> str | None:
        for w, _ in s.words:
            c = surface_of(w)
            if c is not None:
                return c
        # fall back to the first lemma, even if it is not a usable surface
        return s.words[0][0].replace("_", " ").lower()


@dataclass
class Entry:
    surface: str
    category: str
    # synset key of the sense -> (lemma as written, synset key of the value it names)
    senses: dict = field(default_factory=dict)


def build(wn: WordNet, log):
    b = Builder(wn)
    # 1. members of each category; a synset claimed by two categories goes to the first listed
    owner = {}
    members = {}
    overlaps = defaultdict(int)
    for cat in CATEGORIES:
        m = b.members(cat)
        kept = {}
        for k, d in m.items():
            if k in owner:
                overlaps[(owner[k], cat.name)] += 1
                continue
            owner[k] = cat.name
            kept[k] = d
        members[cat.name] = kept

    cats = {c.name: c for c in CATEGORIES}
    entries: dict[tuple, Entry] = {}

    def add(surface, catname, skey, lemma, target):
        e = entries.setdefault((surface, catname), Entry(surface, catname))
        e.senses.setdefault(skey, (lemma, target))

    dropped_lemma = defaultdict(int)
    for name, m in members.items():
        cat = cats[name]
        rx = re.compile(cat.drop_lemma) if cat.drop_lemma else None
        for k in m:
            s = wn.synsets[k]
            for w, _ in s.words:
                if cat.case == "cap" and not is_cap(w):
                    continue
                if cat.case == "lower" and is_cap(w):
                    continue
                if rx and rx.search(w):
                    dropped_lemma[name] += 1
                    continue
                sf = surface_of(w)
                if sf is None:
                    continue
                add(sf, name, k, w, k)

    # 1b. same-value senses of a member's lemma (see Category.same_lemma)
    for cat in CATEGORIES:
        if not cat.same_lemma:
            continue
        for (sf, cname), e in list(entries.items()):
            if cname != cat.name:
                continue
            lemma = sf.replace(" ", "_")
            target = next(iter(e.senses.values()))[1]
            for pos, offs in wn.index.get(lemma, {}).items():
                for off in offs:
                    t = wn.synsets[(pos, off)]
                    if t.lexname not in cat.same_lemma or t.key in owner:
                        continue
                    form = wn.form_in(t, lemma)
                    if cat.case == "cap" and not is_cap(form):
                        continue
                    add(sf, cat.name, t.key, form, target)

    # 2. category adjectives: the satellites of a category's adjective heads (colour: chromatic,
    # achromatic, and the head adjectives with an attribute (`=`) pointer: white, black;
    # material: metallic) that name a member: through a derivation (`+`) pointer to it, or, for
    # a satellite with no such pointer, by having a member's lemma (silver "made from silver").
    # A lemma's canonical is the member its own `+` pointer names, else the one the synset's
    # first linked lemma names.
    for cat in CATEGORIES:
        if not cat.adj_heads:
            continue
        cands = []
        for h in cat.adj_heads:
            cands += [t for t in wn.targets(b.anchor(h), "&") if t.ss_type == "s"]
        if cat.attribute_adjs:
            cands += [s for s in wn.synsets.values() if s.pos == "a" and s.ss_type == "a"
                      and any(p.symbol == "=" for p in s.pointers)]
        by_lemma = defaultdict(set)
        for k in members[cat.name]:
            for w, _ in wn.synsets[k].words:
                by_lemma[w.lower()].add(k)
        for sat in cands:
            links = {}
            for p in sat.pointers:
                if p.symbol == "+" and members[cat.name].get(p.target) is not None:
                    links.setdefault(p.source_word, p.target)
            if not links:
                for i, (w, _) in enumerate(sat.words):
                    named = by_lemma.get(w.lower(), set())
                    if len(named) == 1:
                        links[i + 1] = next(iter(named))
            if not links:
                continue
            default = links[min(links)]
            for i, (w, _) in enumerate(sat.words):
                if is_cap(w):
                    continue
                sf = surface_of(w)
                if sf is None:
                    continue
                add(sf, cat.name, sat.key, w, links.get(i + 1, default))

    # 3. folds: adjective pertainyms (`\`) and noun.person members (`#m`) of a category member
    # ("Spanish" -> spain, "Spaniard" -> spain, "Buddhist" -> buddhism)
    folded = defaultdict(int)
    fold_cats = {c.name for c in CATEGORIES if c.fold}
    # a pertainym may name a place that is not itself a member but has a member's name
    # ("British" -> the island Great Britain, named like the United Kingdom; "Chinese" ->
    # Taiwan's lemma "China"): the pointer's target lemma then finds the member
    by_name = defaultdict(set)
    for k, cname in owner.items():
        if cname in fold_cats and cats[cname].place:
            for w, _ in wn.synsets[k].words:
                by_name[w].add(k)
    for s in wn.synsets.values():
        if s.pos == "a":
            for p in s.pointers:
                if p.symbol != "\\":
                    continue
                target = p.target
                tcat = owner.get(target)
                t = wn.synsets[target]
                if tcat is None and t.lexname == "noun.location":
                    names = [t.words[p.target_word - 1][0]] if p.target_word else [
                        w for w, _ in t.words]
                    found = set().union(*(by_name.get(n, set()) for n in names))
                    if len(found) == 1:
                        target = next(iter(found))
                        tcat = owner[target]
                if tcat not in fold_cats:
                    continue
                idx = [p.source_word - 1] if p.source_word else range(len(s.words))
                for i in idx:
                    w = s.words[i][0]
                    sf = surface_of(w)
                    if sf is None or (cats[tcat].case == "cap" and not is_cap(w)):
                        continue
                    add(sf, tcat, s.key, w, target)
                    folded[tcat] += 1
        elif s.pos == "n" and s.lexname == "noun.person" and s.key not in owner:
            for p in s.pointers:
                if p.symbol != "#m":
                    continue
                tcat = owner.get(p.target)
                if tcat not in fold_cats:
                    continue
                for w, _ in s.words:
                    sf = surface_of(w)
                    if sf is None or (cats[tcat].case == "cap" and not is_cap(w)):
                        continue
                    add(sf, tcat, s.key, w, p.target)
                    folded[tcat] += 1
    return b, members, owner, entries, overlaps, folded, dropped_lemma


# ---------------------------------------------------------------------------------------------
# Ambiguity
# ---------------------------------------------------------------------------------------------


def sense_weights(wn: WordNet, b: Builder, surface: str):
    """[(synset key, form as written, tag count, pos, rank in pos)] for every sense of surface."""
    lemma = surface.replace(" ", "_")
    out = []
    for pos in "nvar":
        for rank, off in enumerate(wn.index.get(lemma, {}).get(pos, [])):
            s = wn.synsets[(pos, off)]
            form = wn.form_in(s, lemma) or lemma
            out.append((s.key, form, wn.tag_count(s, lemma), pos, rank))
    return out


def edit_distance(a: str, b: str) -> int:
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


PLACE_LEXNAMES = ("noun.location", "noun.object")


def judge_any(wn, b, surface, senses, cat_senses, other_senses):
    """The ambiguity rule for an `any` entry (lowercase category lemmas): see the comment above
    SHARE_ANY. Returns (keep?, reason, category weight, total weight)."""
    lemma = surface.replace(" ", "_")
    # 1. an irregular inflection of another word (rose, found, left) is not a value; an -ing form
    #    whose category sense is a noun (swimming) is the gerund noun, judged like any other
    #    (regular -ing forms such as sailing are not in the exception lists at all)
    gerund = (surface.endswith("ing") and surface in wn.exceptions.get("v", {})
              and all(k[0] == "n" for k in cat_senses))
    if surface in b.inflected and not gerund:
        return False, "inflection of " + "/".join(sorted(b.inflected[surface])), 0, 0
    total = sum(w for _, _, w, _, _ in senses) + b.stale.get(lemma, 0)
    c = sum(w for k, _, w, _, _ in senses if k in cat_senses)
    o = sum(w for k, _, w, _, _ in senses if k in other_senses and k not in cat_senses)
    # names: capitalised noun senses outside the category (John, Chase, Wood the actress); a
    # capitalised adjective (Attic) is the adjective of such a name, not another one
    names = sum(1 for k, f, _, p, _ in senses if p == "n" and k not in cat_senses and is_cap(f))
    if total > 0:
        # 2b. by rank: a category sense is the word's first sense in its part of speech (WordNet
        #     lists a word's senses by SemCor frequency, the most frequent first) ...
        dom = sorted({p for k, _, _, p, r in senses if k in cat_senses and r == 0})
        #     ... the parts of speech where a category sense comes first hold at least as many
        #     tagged uses as the other parts of speech together (the verb of fall and judge, the
        #     adjective of general and private outweigh the noun); counts of senses WordNet 3.0
        #     no longer has (an old adjective `pilot`, now the noun of "pilot project") say
        #     nothing of today's parts of speech and count only in the shares
        main_tags = sum(w for _, _, w, p, _ in senses if p in dom)
        rest_tags = sum(w for _, _, w, p, _ in senses if p not in dom)
        main = dom if dom and main_tags >= rest_tags else []
        #     ... and a first sense with under a third of the word's uses is one among many
        #     (bar: 10 of 37, mate: 4 of 18)
        dominant = bool(main) and c / total >= DOMINANT_MIN
        # 2a. by share: the category holds half the tagged uses and a most tagged sense (ties
        #     included: banana, the fruit and the plant, 1 each)
        top_all = max(w for _, _, w, _, _ in senses)
        share = c / total >= SHARE_ANY and any(
            w == top_all and k in cat_senses for k, _, w, _, _ in senses)
        # no rival category: another category holds at most a quarter of the tagged uses
        other_ok = o / total <= OTHER_CAT_MAX
        # one name is tolerated for a tagged word; several (John: the apostle, the king, the
        # gospel) mark a common proper name unless the category is well attested
        cap_ok = not names or c >= CAP_HOMOGRAPH_MIN or (names == 1 and c > 0)
        ok = (dominant or share) and other_ok and cap_ok
        if share:
            pos_why = ", half the uses"
        elif not dom:
            pos_why = ", not the first sense"
        elif not main:
            pos_why = f", other parts of speech {rest_tags} > {main_tags}"
        elif not dominant:
            pos_why = f", first {'/'.join(POS_NAMES[p] for p in dom)} sense but under a third"
        else:
            pos_why = f", first {'/'.join(POS_NAMES[p] for p in dom)} sense"
        why = f"{c}/{total}" + pos_why + (
            "" if other_ok else f", other category {o}/{total}") + (
            "" if cap_ok else ", capitalised homograph")
        return ok, why, c, total
    # 3. untagged: a category sense is among the first UNTAGGED_RANK senses of its part of speech,
    # the word has at most UNTAGGED_MAX_SENSES senses, none in another part of speech except
    # verbs WordNet derives from a category sense (`+`: to motorcycle = ride a motorcycle; not
    # to auction, from the sale, while the bridge game comes first), and no name
    poss = {k[0] for k in cat_senses}
    ranks = [r for k, _, _, p, r in senses if k in cat_senses]
    first_ok = bool(ranks) and min(ranks) < UNTAGGED_RANK

    def derived_verb(k):
        return any(q.symbol == "+" and q.target in cat_senses for q in wn.synsets[k].pointers)
    other_pos = any(p not in poss and not (p == "v" and derived_verb(k))
                    for k, _, _, p, _ in senses)
    few = len(senses) <= UNTAGGED_MAX_SENSES
    ok = first_ok and not other_pos and not names and few
    return ok, "untagged" + ("" if first_ok else ", not among the first senses") + (
        ", senses in another part of speech" if other_pos else "") + (
        ", capitalised homograph" if names else "") + (
        "" if few else ", too many senses"), 0, 0


POS_NAMES = {"n": "noun", "v": "verb", "a": "adjective", "r": "adverb"}


def judge(wn, b, surface, cat_senses: set, case: str, other_senses: set = frozenset(),
          place: bool = False):
    """(keep?, reason, category weight, total weight)"""
    senses = sense_weights(wn, b, surface)
    if place:
        # for a place name, another place of the same name (the islands of Japan, the river
        # Jordan) is not a rival: which place is meant is settled between the place categories;
        # nor is the people or the language named after it (a Delaware, the Iowa dialect).
        # Individuals (instances: Washington the president) and other things remain rivals.
        def rival(x):
            syn = wn.synsets[x[0]]
            if x[0] in cat_senses or not is_cap(x[1]):
                return True
            if syn.lexname in PLACE_LEXNAMES or syn.lexname == "noun.communication":
                return False
            if syn.lexname == "noun.person" and not any(p.symbol == "@i" for p in syn.pointers):
                return False
            return True
        senses = [x for x in senses if rival(x)]
    if case == "any":
        return judge_any(wn, b, surface, senses, cat_senses, other_senses)
    # cap
    capsenses = [x for x in senses if is_cap(x[1])]
    lower = sum(w for _, f, w, _, _ in senses if not is_cap(f))
    lower += b.stale.get(surface.replace(" ", "_"), 0)
    tc = sum(w for _, _, w, _, _ in capsenses)
    c = sum(w for k, _, w, _, _ in capsenses if k in cat_senses)
    if lower > max(LOWER_VS_CAP * tc, LOWER_FLOOR):
        return False, f"lowercase word ({lower} vs {tc})", c, tc
    if tc > 0:
        ok = c / tc >= SHARE_CAP
        return ok, f"cap share {c}/{tc}", c, tc
    ncat = sum(1 for k, _, _, _, _ in capsenses if k in cat_senses)
    nother = len(capsenses) - ncat
    if not capsenses:  # e.g. a folded form not in the index under this spelling
        return True, "cap, not indexed", 0, 0
    return ncat >= nother, f"cap untagged {ncat} vs {nother} senses", 0, 0


def resolve(wn, b, entries, log):
    """Applies the ambiguity rule; returns {(surface, category): (canonical, case)} and notes."""
    cats_order = {c.name: i for i, c in enumerate(CATEGORIES)}
    cats = {c.name: c for c in CATEGORIES}
    by_surface = defaultdict(list)
    for (sf, cat), e in entries.items():
        by_surface[sf].append(e)
    result = {}
    kept = {}
    excluded = []  # (weight, surface, category, reason)
    cross = []
    within = []
    variants = []
    passed_by = {}
    failed = []
    reasons = {}  # (surface, category) -> the ambiguity test's verdict, for --explain
    for sf in sorted(by_surface):
        es = by_surface[sf]
        passed = []
        for e in es:
            case = "any" if any(not is_cap(l) for l, _ in e.senses.values()) else "cap"
            pool = set(e.senses)
            for g in FOLD_GROUPS:
                if e.category in g:
                    for o in es:
                        if o.category in g:
                            pool |= set(o.senses)
            mine = set(e.senses)
            others = set()
            for o in es:
                if o is e:
                    continue
                if any({e.category, o.category} <= g for g in RELATED_GROUPS):
                    mine |= set(o.senses)
                else:
                    others |= set(o.senses)
            cat = cats[e.category]
            ok, why, c, t = judge(wn, b, sf, pool if case == "cap" else mine, case,
                                  others, cat.place)
            reasons[(sf, e.category)] = why
            if ok and case == "any":  # rank by the category's own weight
                c = sum(w for k, _, w, _, _ in sense_weights(wn, b, sf) if k in e.senses)
            if not ok:
                failed.append((t, sf, e, case, why))
                continue
            passed.append((e, case, c, why))
        passed_by[sf] = passed

    # spelling variants: a surface that failed, but is within two letters of a surface that
    # passed in the same category, shares a category synset with it, has no lowercase sense
    # the other lacks and no capitalised homograph but people (grey/gray: Zane Grey), takes the
    # other's verdict; its own tag counts are just smaller (SemCor is American English)
    def lower_synsets(sf):
        return {k for k, f, _, _, _ in sense_weights(wn, b, sf) if not is_cap(f)}

    def cap_rivals_are_people(sf, e):
        return all(wn.synsets[k].lexname == "noun.person"
                   for k, f, _, _, _ in sense_weights(wn, b, sf)
                   if is_cap(f) and k not in e.senses)

    for t, sf, e, case, why in failed:
        rescued = None
        if case == "any" and sf not in b.inflected:
            mine = lower_synsets(sf)
            for k, (lemma, target) in e.senses.items():
                syn = wn.synsets[k]
                for w, _ in syn.words:
                    other = surface_of(w)
                    if other is None or other == sf or is_cap(w):
                        continue
                    if edit_distance(sf, other) > 2 or not cap_rivals_are_people(sf, e):
                        continue
                    hit = [x for x in passed_by.get(other, []) if x[0].category == e.category]
                    if hit and mine and mine <= lower_synsets(other):
                        rescued = (other, hit[0])
                        break
                if rescued:
                    break
        if rescued:
            other, (oe, ocase, oc, _) = rescued
            passed_by[sf].append((e, case, oc, f"variant of {other}"))
            reasons[(sf, e.category)] += f"; variant of {other}"
            variants.append((sf, e.category, other))
        else:
            excluded.append((t, sf, e.category, why))

    for sf in sorted(by_surface):
        passed = passed_by[sf]
        if not passed:
            continue
        if len(passed) > 1:
            grp = {e.category for e, _, _, _ in passed}
            folded_pair = any(grp <= g for g in PAIR_GROUPS) and all(
                case == "cap" for _, case, _, _ in passed)
            if not folded_pair:
                def rank(x):
                    e, case, c, _ = x
                    first = min((r for k, _, _, p, r in sense_weights(wn, b, sf)
                                 if k in e.senses), default=99)
                    direct = any(k == t for k, (_, t) in e.senses.items())
                    return (-c, not direct, cats_order[e.category], first)
                passed.sort(key=rank)
                cross.append((sf, [(e.category, c) for e, _, c, _ in passed]))
                # the dominant one, and its pair-group partners when all are capitalised
                top = passed[0]
                group = set().union(*(g for g in PAIR_GROUPS if top[0].category in g))
                passed = [top] + [x for x in passed[1:] if x[0].category in group
                                  and x[1] == "cap" and top[1] == "cap"]
        for e, case, c, why in passed:
            kept[(sf, e.category)] = (e, case)

    # canonical of a value synset: among its lemmas that are kept surfaces (in any category,
    # written in the same case: the room `attic` does not rename the dialect Attic, which keeps
    # `classical greek`), the one with the highest tag count, then the fewest words, then
    # WordNet's order; else its first usable lemma
    canon_cache = {}
    kept_case = defaultdict(set)
    for (sf, _), (_, case) in kept.items():
        kept_case[sf].add(case)

    def canonical(key, cat):
        if (key, cat) in canon_cache:
            return canon_cache[(key, cat)]
        syn = wn.synsets[key]
        best = None
        for i, (w, _) in enumerate(syn.words):
            sf2 = surface_of(w)
            if sf2 is None or ("cap" if is_cap(w) else "any") not in kept_case.get(sf2, ()):
                continue
            score = (-wn.tag_count(syn, w), sf2.count(" "), i)
            if best is None or score < best[0]:
                best = (score, sf2)
        cn = best[1] if best else b.canonical(syn)
        canon_cache[(key, cat)] = cn
        return cn

    for (sf, cat), (e, case) in kept.items():
        canons = defaultdict(int)
        first = {}
        sw = sense_weights(wn, b, sf)
        weights = {k: w for k, _, w, _, _ in sw}
        ranks = {k: (p != "n", r) for k, _, _, p, r in sw}
        for k, (lemma, target) in e.senses.items():
            cn = canonical(target, cat)
            canons[cn] += weights.get(k, 0)
            first[cn] = min(first.get(cn, (9, 999)), ranks.get(k, (9, 999)))
        if len(canons) == 1:
            cn = next(iter(canons))
        else:
            order = sorted(canons, key=lambda x: (-canons[x], first[x], x))
            top, second = order[0], order[1]
            if canons[top] > canons[second]:
                cn = top
            elif sf in canons:
                cn = sf
            elif cat == "currency":
                cn = sf  # "dinar", "peso": the unit name shared by several countries
            else:
                cn = top
            within.append((sf, cat, cn, sorted(canons)))
        result[(sf, cat)] = (cn, case)
    return result, excluded, cross, within, canonical, variants, reasons



# ---------------------------------------------------------------------------------------------
# Antonyms
# ---------------------------------------------------------------------------------------------

WORD_RE = re.compile(r"[a-z]+")
ANT_MAX_RANK = 3  # an untagged side: both senses among the words' first 3 of that POS
SAT_HEAD_MIN = 5  # satellite inheritance: both head senses tagged at least this often
SAT_MIN = 2  # ... and the satellite sense at least this often


def antonyms(wn: WordNet, b: Builder):
    def rank(s, lemma):
        offs = wn.index.get(lemma.lower(), {}).get(s.pos, [])
        return offs.index(s.offset) if s.offset in offs else 99

    def good(s, i):
        # single lowercase words of 3+ letters, no stop words; adverb particles are the
        # exception (up/down, on/off, in/out: "the light is on" / "the light is off")
        w = s.words[i][0]
        if not WORD_RE.fullmatch(w):
            return None
        if s.pos != "r" and (w in STOP_WORDS or len(w) <= 2):
            return None
        return w

    pairs = {}  # (a, b, pos) -> kind
    considered = set()  # candidate direct pairs (single words)
    direct = defaultdict(set)  # adjective head synset key -> [(lemma index, antonym synset, idx)]
    for s in wn.synsets.values():
        for p in s.pointers:
            if p.symbol != "!" or not p.source_word:
                continue
            t = wn.synsets[p.target]
            i, j = p.source_word - 1, p.target_word - 1
            a, c = good(s, i), good(t, j)
            if a is None or c is None or a == c:
                continue
            considered.add(tuple(sorted((a, c))) + (s.pos,))
            ta, tc = wn.tag_count(s, a), wn.tag_count(t, c)
            ra, rc = rank(s, a), rank(t, c)
            ok = (ta > 0 and tc > 0) or (ra < ANT_MAX_RANK and rc < ANT_MAX_RANK and ta + tc > 0)
            if not ok:
                continue
            pos = s.pos
            key = tuple(sorted((a, c))) + (pos,)
            pairs[key] = "direct"
            if s.pos == "a" and s.ss_type == "a":
                direct[s.key].add((i, t.key, j))
    # satellites: a satellite lemma inherits its head's antonym when
    #  - the head pair passed the filter above, with both heads' senses tagged at least
    #    SAT_HEAD_MIN times, and the head has that one antonym only (late: early, middle -> no);
    #  - the satellite synset has a single similar-to head;
    #  - the satellite synset is the lemma's first adjective sense, tagged at least SAT_MIN
    #    times, and holds at least half the lemma's tag count over all parts of speech (so the
    #    word mostly means this: `walking` (walking distance) is mostly the noun/verb).
    inherited = 0

    def total_tags(lemma):
        return sum(wn.tag_count(x, lemma) for x in wn.senses(lemma)) + b.stale.get(lemma, 0)
    for s in wn.synsets.values():
        if s.ss_type != "s":
            continue
        heads = [t for t in wn.targets(s, "&") if t.ss_type == "a"]
        if len(heads) != 1:
            continue
        h = heads[0]
        ants = direct.get(h.key, ())
        if len({(hi, tkey) for hi, tkey, _ in ants}) != 1:
            continue
        for (hi, tkey, tj) in ants:
            t = wn.synsets[tkey]
            c = good(t, tj)
            hw = good(h, hi)
            if c is None or hw is None:
                continue
            if tuple(sorted((hw, c))) + ("a",) not in pairs:
                continue
            if wn.tag_count(h, hw) < SAT_HEAD_MIN or wn.tag_count(t, c) < SAT_HEAD_MIN:
                continue
            for i in range(len(s.words)):
                w = good(s, i)
                if w is None or w == c:
                    continue
                tc_w = wn.tag_count(s, w)
                if rank(s, w) != 0 or tc_w < SAT_MIN or tc_w * 2 < total_tags(w):
                    continue
                key = tuple(sorted((w, c))) + ("s",)
                if tuple(sorted((w, c))) + ("a",) in pairs:
                    continue
                if key not in pairs:
                    pairs[key] = "satellite"
                    inherited += 1
    return pairs, len(considered), inherited


# ---------------------------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------------------------

PACKAGE_VERSION = "unknown"


def licence_text(wordnet_dir: str) -> str:
    """The licence paragraph from a data file's header (identical to the package copyright)."""
    lines = []
    with open(os.path.join(wordnet_dir, "data.noun"), encoding="latin-1") as f:
        for line in f:
            if not line.startswith("  "):
                break
            # "  1 This software ..." -> text after the line number
            m = re.match(r"  \d+ ?(.*)$", line.rstrip("\n"))
            lines.append(m.group(1).rstrip() if m else "")
    text = "\n".join(lines).strip("\n") + "\n"
    return ("WordNet Release 3.0 licence, as it heads every WordNet 3.0 database file (and\n"
            "/usr/share/doc/wordnet-base/copyright). It covers the lexicon files in this\n"
            "directory, which are derived from the WordNet 3.0 database.\n\n" + text)


def package_version() -> str:
    """Debian's wordnet-base version, when dpkg knows it (recorded for reproducibility)."""
    try:
        with open("/var/lib/dpkg/status", encoding="utf-8") as f:
            block = None
            for line in f:
                if line.startswith("Package: "):
                    block = line.split(": ", 1)[1].strip()
                elif block == "wordnet-base" and line.startswith("Version: "):
                    return line.split(": ", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def header(kind: str, extra: list[str]) -> str:
    out = [
        f"# memledger lexicon: {kind}",
        "# Source: WordNet 3.0, Princeton University (https://wordnet.princeton.edu/),",
        f"#   via Debian's wordnet-base package ({PACKAGE_VERSION}). Licence: see WORDNET-LICENSE"
        " in this directory.",
        "#   WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved.",
        f"# Generated by: {COMMAND}",
        "# Do not edit by hand; change scripts/lexicon/gen_lexicon.py and regenerate.",
    ]
    out += ["# " + e for e in extra]
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wordnet", default="/usr/share/wordnet")
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--out", default=os.path.join(repo, "engine/src/classify/lexicon"),
                    help="output directory (default: the repository's engine/src/classify/lexicon)")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--samples", type=int, default=6)
    ap.add_argument("--explain", nargs="*", default=[], help="show the ambiguity test of surfaces")
    args = ap.parse_args(argv)
    log = (lambda *a: None) if args.quiet else (lambda *a: print(*a))

    global PACKAGE_VERSION
    PACKAGE_VERSION = package_version()
    wn = WordNet(args.wordnet)
    b, members, owner, entries, overlaps, folded, dropped_lemma = build(wn, log)
    result, excluded, cross, within, canonical, variants, reasons = resolve(wn, b, entries, log)

    # broader: a member synset's nearest hypernym in the same category, by canonical
    broader = set()
    kept_canon = defaultdict(set)
    for (sf, cat), (cn, case) in result.items():
        kept_canon[cat].add(cn)
    for name, m in members.items():
        for k in m:
            s = wn.synsets[k]
            c = canonical(k, name)
            for h in wn.targets(s, "@"):
                if members[name].get(h.key) is not None:
                    hc = canonical(h.key, name)
                    if hc != c and c in kept_canon[name] and hc in kept_canon[name]:
                        broader.add((name, c, hc))
    for sf, cat, cn, cands in within:
        if cn == sf:
            for other in cands:
                if other != sf and other in kept_canon[cat]:
                    broader.add((cat, other, sf))

    pairs, considered, inherited = antonyms(wn, b)

    os.makedirs(args.out, exist_ok=True)
    # by surface, then a surface's lines in the order of CATEGORIES (australia: country, then
    # continent; french: country, then language); the classifier reads them in file order
    cat_order = {c.name: i for i, c in enumerate(CATEGORIES)}
    cat_lines = [f"{sf}\t{cat}\t{cn}\t{case}" for (sf, cat), (cn, case)
                 in sorted(result.items(), key=lambda x: (x[0][0], cat_order[x[0][1]]))]
    with open(os.path.join(args.out, "categories.tsv"), "w", encoding="utf-8") as f:
        f.write(header("value categories", [
            "Format: surface<TAB>category<TAB>canonical<TAB>case",
            "  surface: lowercase, 1-3 space-separated words; canonical: the lowercase value it",
            "  stands for (synonyms share one; nationality words map to their country);",
            "  case: cap = applies only when the text writes the word capitalised (first letter",
            "  upper case), any = applies in any case.",
            "A surface may have two lines only for a capitalised nationality/language name",
            "  (country and language) or a country that is also a continent (australia); its",
            "  lines come in category order: country first.",
        ]))
        f.write("\n".join(cat_lines) + "\n")
    ant_lines = sorted(f"{a}\t{c}\t{pos}" for (a, c, pos) in pairs)
    with open(os.path.join(args.out, "antonyms.tsv"), "w", encoding="utf-8") as f:
        f.write(header("antonym pairs", [
            "Format: word<TAB>word<TAB>pos, each unordered pair once (alphabetical order).",
            "  pos: n v a r = WordNet's direct antonyms (! pointers) of that part of speech;",
            "  s = an adjective satellite that inherits its head adjective's direct antonym",
            "  (e.g. a synonym of `wet` paired with `dry`); less certain than a.",
        ]))
        f.write("\n".join(ant_lines) + "\n")
    br_lines = sorted(f"{c}\t{x}\t{y}" for (c, x, y) in broader)
    with open(os.path.join(args.out, "broader.tsv"), "w", encoding="utf-8") as f:
        f.write(header("broader values within a category", [
            "Format: category<TAB>canonical<TAB>broader canonical",
            "  the second value is a kind of the third in WordNet (crimson -> red, cardiologist",
            "  -> specialist): the two are compatible, not alternatives.",
        ]))
        f.write("\n".join(br_lines) + "\n")
    irregular = set()
    for pos in ("verb", "noun"):
        with open(os.path.join(args.wordnet, f"{pos}.exc"), encoding="utf-8") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and "_" not in parts[0] and "_" not in parts[1] and parts[0] != parts[1]:
                    irregular.add((parts[0], parts[1], pos[0]))
    ir_lines = sorted(f"{x}\t{y}\t{pos}" for (x, y, pos) in irregular)
    with open(os.path.join(args.out, "irregular.tsv"), "w", encoding="utf-8") as f:
        f.write(header("irregular inflections", [
            "Format: inflected<TAB>base<TAB>pos, from WordNet's exception lists (verb.exc,",
            "  noun.exc): forms no suffix rule undoes (won -> win, met -> meet, children -> child).",
            "  The classifier reads a word as its base before stemming it.",
        ]))
        f.write("\n".join(ir_lines) + "\n")
    with open(os.path.join(args.out, "WORDNET-LICENSE"), "w", encoding="utf-8") as f:
        f.write(licence_text(args.wordnet))

    for sf in args.explain:
        for (esf, cat), e in sorted(entries.items()):
            if esf != sf:
                continue
            lost = "" if (sf, cat) in result or any(x[1] == sf and x[2] == cat for x in excluded) \
                else " (passed; another category keeps the surface)"
            print(f"{sf} [{cat}] -> {result.get((sf, cat))}  test: {reasons.get((sf, cat))}{lost}")
            for k, f, w, p, r in sense_weights(wn, b, sf):
                mark = "*" if k in e.senses else " "
                print(f"   {mark} {p}{r + 1} {f} {w} {wn.synsets[k].lexname} "
                      f"{wn.synsets[k].gloss[:60]}")
        for x in excluded:
            if x[1] == sf:
                print("   excluded:", x)

    # ---- summary ----
    counts = defaultdict(int)
    cap_counts = defaultdict(int)
    canons = defaultdict(set)
    for (sf, cat), (cn, case) in result.items():
        counts[cat] += 1
        canons[cat].add(cn)
        if case == "cap":
            cap_counts[cat] += 1
    log("== categories: surfaces (values, cap-gated) ==")
    for c in CATEGORIES:
        log(f"{c.name:20s} {counts[c.name]:6d} ({len(canons[c.name])} values, "
            f"{cap_counts[c.name]} cap) members={len(members[c.name])} folded={folded[c.name]}")
    log(f"total {len(result)} lines; antonyms {len(pairs)} ({inherited} satellite) "
        f"of {considered} candidate direct pairs; broader {len(broader)}")
    by_pos = defaultdict(int)
    for (_, _, pos) in pairs:
        by_pos[pos] += 1
    log("antonyms by pos: " + ", ".join(f"{p} {by_pos[p]}" for p in "avrns"))
    log("== samples ==")
    for c in CATEGORIES:
        xs = sorted(sf for (sf, cat) in result if cat == c.name)
        step = max(1, len(xs) // args.samples)
        smp = [f"{sf}->{result[(sf, c.name)][0]}" for sf in xs[::step][: args.samples]]
        log(f"{c.name}: " + ", ".join(smp))
    log("== overlaps (synset claimed by the earlier category) ==")
    for (a, c), n in sorted(overlaps.items()):
        log(f"  {a} < {c}: {n}")
    log("== cross-category surfaces (kept first) ==")
    for sf, xs in cross[:60]:
        log(f"  {sf}: {xs}")
    log(f"  ... {len(cross)} in all")
    log(f"== spelling variants kept with their twin's verdict: {len(variants)} ==")
    log("  " + ", ".join(f"{a}~{o} [{c}]" for a, c, o in variants[:40]))
    log("== most used surfaces excluded by the ambiguity rule ==")
    for t, sf, cat, why in sorted(excluded, key=lambda x: (-x[0], x[1]))[:80]:
        log(f"  {sf} [{cat}] {why}")
    log(f"  ... {len(excluded)} (surface, category) exclusions in all")
    return result, excluded, cross, within, pairs


if __name__ == "__main__":
    main()
