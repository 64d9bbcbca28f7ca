#!/usr/bin/env python3
"""Writes tests/fixtures/category_swaps.jsonl: one word of a fact swapped for another of its kind,
in the kinds a user expects to hold one value at a time — a nationality, a room, a colour, a
material, an adjective and its WordNet antonym — and, as the cases that must stay quiet, the same
kinds in slots of many values and the kinds that hold many on purpose (drinks, instruments,
vegetables: "I drink coffee" beside "I drink tea" is two facts).

Each row: {"id", "a", "b", "category", "slot", "label"}; slot "one" is labelled contradictory,
"many" complementary. The values are common members of the lexicon's categories and antonym pairs
(engine/src/classify/lexicon/categories.tsv, antonyms.tsv: the script checks that each is there),
the sentences are this script's own; neither comes from the evaluation sets.

    python3 scripts/eval/category_swaps.py            # rewrites the fixture
    python3 scripts/eval/category_swaps.py --check    # exits 1 if the fixture is stale
"""
import itertools, json, os, sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
LEXICON = os.path.join(ROOT, "engine", "src", "classify", "lexicon")

VALUES = {
    "nationality": ["French", "German", "Italian", "Brazilian", "Japanese", "Canadian", "Nigerian", "Swedish"],
    "room": ["kitchen", "bedroom", "bathroom", "attic", "basement", "garage", "library", "hallway"],
    "colour": ["red", "blue", "green", "yellow", "black", "white", "pink", "brown"],
    "material": ["wood", "steel", "glass", "leather", "cotton", "wool", "silk", "plastic"],
    "drink": ["coffee", "tea", "lemonade", "beer", "cider", "milk"],
    "musical_instrument": ["piano", "violin", "guitar", "flute", "cello", "trumpet"],
    "vegetable": ["potatoes", "spinach", "cabbage", "broccoli", "turnips", "leeks"],
}

# the lexicon category each kind's values must be in
LEXICON_CATEGORY = {"nationality": "country"}

# (category, slot, template): slot "one" holds one value at a time, "many" several at once.
TEMPLATES = [
    ("nationality", "one", "Tomas is {}."),
    ("nationality", "one", "My grandmother was {}."),
    ("nationality", "one", "Elena is a {} citizen."),
    ("nationality", "one", "Our new landlord is {}."),
    ("nationality", "one", "Marco holds {} citizenship."),
    ("nationality", "one", "The author of the report is {}."),
    ("nationality", "one", "Dr. Okafor is a {} surgeon."),
    ("nationality", "one", "Her husband is {} by birth."),
    ("nationality", "many", "Priya likes {} food."),
    ("nationality", "many", "Tomas watches {} films on weekends."),
    ("nationality", "many", "The deli sells {} cheese."),
    ("nationality", "many", "Anna has a {} friend from university."),
    ("nationality", "many", "Leo cooks {} dishes for his family."),
    ("room", "one", "The spare keys are kept in the {}."),
    ("room", "one", "We meet in the {} every Monday."),
    ("room", "one", "The family eats dinner in the {}."),
    ("room", "one", "Grandpa's old piano is in the {}."),
    ("room", "one", "The cat sleeps in the {}."),
    ("room", "one", "The book club gathers in the {} on Thursdays."),
    ("room", "many", "The new house has a {} upstairs."),
    ("room", "many", "The flat has a small {}."),
    ("room", "many", "They painted the {} last week."),
    ("room", "many", "Nora has cleaned the {} twice this week."),
    ("colour", "one", "Tom painted the fence {}."),
    ("colour", "one", "The walls of the nursery are {}."),
    ("colour", "one", "My new bike is {}."),
    ("colour", "one", "Her car is {}."),
    ("colour", "one", "The company's logo is {}."),
    ("colour", "one", "Anna dyed her hair {}."),
    ("colour", "one", "The team's jerseys are {} this season."),
    ("colour", "one", "They painted the kitchen {}."),
    ("colour", "many", "Maya owns a {} scarf and wears it often."),
    ("colour", "many", "The shop sells {} paint."),
    ("colour", "many", "Sam bought a {} umbrella."),
    ("colour", "many", "Lena likes {} flowers."),
    ("material", "one", "The dining table is made of {}."),
    ("material", "one", "Her new jacket is {}."),
    ("material", "one", "The old bridge was built from {}."),
    ("material", "one", "They built the shed out of {}."),
    ("material", "one", "The handle of the knife is {}."),
    ("material", "one", "Grandpa carved the bowl from {}."),
    ("material", "one", "The sculpture in the lobby is made entirely of {}."),
    ("material", "one", "The company makes its bottles from {}."),
    ("material", "many", "The market stall sells {}."),
    ("material", "many", "The shop has a {} chair."),
    ("material", "many", "He collects {} buttons."),
    ("material", "many", "Tom likes the feel of {}."),
    ("drink", "many", "Priya drinks {} in the morning."),
    ("drink", "many", "I drink {} at work."),
    ("drink", "many", "The cafe serves {}."),
    ("musical_instrument", "many", "Alice plays the {} in a local band."),
    ("musical_instrument", "many", "Ben is learning the {}."),
    ("vegetable", "many", "Lena eats {} every day."),
    ("vegetable", "many", "The soup contains {}."),
    ("vegetable", "many", "Tom buys {} at the market."),
]

# Adjectives and their WordNet antonym (antonyms.tsv), each in three facts of one value.
ANTONYMS = [
    ("hot", "cold", ["The water in the pool is {}.", "The soup Mia served was {}.", "The office is always {} in winter."]),
    ("open", "closed", ["The pharmacy is {} on Sundays.", "The main gate was {} this morning.", "The library on Elm Street is {} today."]),
    ("cheap", "expensive", ["The hotel near the station is {}.", "Flights to Lisbon are {} in March.", "The new phone is {}."]),
    ("quiet", "noisy", ["The street outside our flat is {}.", "Tom's new neighbours are {}.", "The cafe on the corner is {} at lunch."]),
    ("early", "late", ["The train to Leeds was {} today.", "Maria's flight landed {}.", "The delivery came {} this week."]),
    ("full", "empty", ["The car park behind the gym is {}.", "The fridge in the office is {}.", "The water tank was {} on Monday."]),
    ("public", "private", ["The repository for the billing service is {}.", "The garden behind the museum is {}.", "Sam's profile is {}."]),
    ("dark", "light", ["The hallway upstairs is {}.", "Her new flat is {}.", "The basement room was {}."]),
    ("wet", "dry", ["The paint on the bench is {}.", "The ground behind the barn was {}.", "The towels in the gym are {}."]),
    ("easy", "difficult", ["The final exam was {}.", "The hike to the lake is {}.", "Setting up the printer was {}."]),
    ("safe", "dangerous", ["The old bridge is {}.", "The neighbourhood near the park is {}.", "The trail along the cliff is {}."]),
    ("strong", "weak", ["The wifi signal in the attic is {}.", "The coffee at the hotel was {}.", "Their case in court is {}."]),
    ("rich", "poor", ["Jonas's family is {}.", "The soil in the garden is {}.", "The village was {} in those years."]),
    ("clean", "dirty", ["The kitchen at the hostel was {}.", "The water in the river is {}.", "The windows of the shop are {}."]),
    ("true", "false", ["The rumour about the merger is {}.", "Her statement to the police was {}.", "The claim in the article is {}."]),
    ("legal", "illegal", ["Parking on this street is {}.", "The sale of the land was {}.", "Their new business is {}."]),
    ("formal", "informal", ["The dress code for the dinner is {}.", "The meeting with the board was {}.", "Her letter to the council was {}."]),
    ("married", "unmarried", ["My cousin Rafael is {}.", "The new tenant is {}.", "Jenna's older brother is {}."]),
    ("fast", "slow", ["The internet at the office is {}.", "The new build server is {}.", "The ferry to the island is {}."]),
    ("heavy", "light", ["The box of books is {}.", "The traffic this morning was {}.", "Tom's suitcase is {}."]),
    ("hard", "soft", ["The mattress in the guest room is {}.", "The bread from the bakery was {}.", "The ground in the garden is {}."]),
    ("long", "short", ["The queue at the museum was {}.", "Her hair is {}.", "The meeting with the client was {}."]),
    ("narrow", "wide", ["The road to the farm is {}.", "The staircase in the tower is {}.", "The river near the town is {}."]),
    ("loose", "tight", ["The lid on the jar is {}.", "His new shoes are {}.", "The screws on the shelf are {}."]),
    ("asleep", "awake", ["The baby is {}.", "Grandpa was {} when we arrived.", "The dog is {} in its basket."]),
    ("alive", "dead", ["The plant on the balcony is {}.", "Her grandfather is {}.", "The old oak in the park is {}."]),
    ("healthy", "unhealthy", ["The school lunches are {}.", "Rosa's diet is {}.", "The fish in the pond are {}."]),
    ("thick", "thin", ["The walls of the cottage are {}.", "The ice on the lake is {}.", "The report from the auditors is {}."]),
    ("friendly", "unfriendly", ["The staff at the hotel were {}.", "Our new neighbour is {}.", "The cat next door is {}."]),
    ("successful", "unsuccessful", ["The product launch was {}.", "Her first novel was {}.", "The rescue attempt was {}."]),
]

# Short facts: an antonym said of someone by a copula, or a deed of someone named by a pronoun
# (the words as written; BASE gives the pair of antonyms.tsv they inflect).
ANTONYM_SHORT = [
    ("rich", "poor", "Tomas is {}."),
    ("married", "unmarried", "Ana is {}."),
    ("asleep", "awake", "Grandpa is {}."),
    ("alive", "dead", "Their cat is {}."),
    ("healthy", "unhealthy", "Rosa is {}."),
    ("friendly", "unfriendly", "Jonas is {}."),
    ("optimist", "pessimist", "Kara is an {}."),
    ("generous", "stingy", "Her uncle is {}."),
    ("patient", "impatient", "Our landlord is {}."),
    ("strong", "weak", "Mira is {}."),
    ("passed", "failed", "He {} the driving test."),
    ("won", "lost", "She {} the election."),
    ("bought", "sold", "They {} the house on Elm Street."),
    ("accepted", "refused", "She {} the job offer."),
    ("early", "late", "He arrived {} for the interview."),
]
BASE = {"passed": "pass", "failed": "fail", "won": "win", "lost": "lose", "bought": "buy", "sold": "sell",
        "accepted": "accept", "refused": "refuse"}

# The antonym kept quiet: who the fact is about, or "a" one of many.
ANTONYM_KEEP = [
    ("cheap", "expensive", "The {} plan includes phone support."),
    ("old", "new", "The {} office is in Leeds."),
    ("young", "old", "A {} man was waiting at the door."),
]


def lexicon():
    entries, antonyms = {}, set()
    for line in open(os.path.join(LEXICON, "categories.tsv")):
        if line.startswith("#") or not line.strip():
            continue
        surface, category = line.split("\t")[:2]
        entries.setdefault(surface, set()).add(category)
    for name in ("antonyms.tsv", "antonyms-extra.tsv"):
        for line in open(os.path.join(LEXICON, name)):
            if line.startswith("#") or not line.strip():
                continue
            x, y = line.rstrip("\n").split("\t")[:2]
            antonyms.add(frozenset((x, y)))
    return entries, antonyms


def singular(w):
    return w[:-3] + "y" if w.endswith("ies") else w[:-2] if w.endswith(("oes", "ches")) else w.rstrip("s")


def check():
    entries, antonyms = lexicon()
    for kind, values in VALUES.items():
        category = LEXICON_CATEGORY.get(kind, kind)
        for v in values:
            found = entries.get(v.lower(), set()) | entries.get(singular(v.lower()), set())
            if category not in found:
                sys.exit(f"{v!r} is not a {category} in categories.tsv")
    for x, y, _ in ANTONYMS + ANTONYM_SHORT + ANTONYM_KEEP:
        x, y = BASE.get(x, x), BASE.get(y, y)
        if frozenset((x, y)) not in antonyms:
            sys.exit(f"{x}/{y} is not an antonym pair of antonyms.tsv")


def pairs():
    out = []
    for n, (category, slot, template) in enumerate(TEMPLATES):
        for x, y in itertools.combinations(VALUES[category], 2):
            out.append({
                "id": f"cat-{n}-{x}-{y}".lower(), "a": template.format(y), "b": template.format(x),
                "category": category, "slot": slot,
                "label": "contradictory" if slot == "one" else "complementary",
            })
    for n, (x, y, templates) in enumerate(ANTONYMS):
        for k, template in enumerate(templates):
            out.append({
                "id": f"ant-{n}-{k}-{x}-{y}", "a": template.format(y), "b": template.format(x),
                "category": "antonym", "slot": "one", "label": "contradictory",
            })
    for n, (x, y, template) in enumerate(ANTONYM_SHORT):
        out.append({
            "id": f"ant-short-{n}-{x}-{y}", "a": template.format(y), "b": template.format(x),
            "category": "antonym", "slot": "one", "label": "contradictory",
        })
    for n, (x, y, template) in enumerate(ANTONYM_KEEP):
        out.append({
            "id": f"ant-keep-{n}-{x}-{y}", "a": template.format(y), "b": template.format(x),
            "category": "antonym", "slot": "many", "label": "complementary",
        })
    return out


def main():
    check()
    path = os.path.join(ROOT, "tests", "fixtures", "category_swaps.jsonl")
    text = "".join(json.dumps(p) + "\n" for p in pairs())
    if "--check" in sys.argv[1:]:
        stale = not os.path.exists(path) or open(path).read() != text
        sys.exit("tests/fixtures/category_swaps.jsonl is stale: run scripts/eval/category_swaps.py" if stale else 0)
    with open(path, "w") as f:
        f.write(text)
    print(f"{len(pairs())} pairs written to tests/fixtures/category_swaps.jsonl")


main()
