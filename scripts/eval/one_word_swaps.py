#!/usr/bin/env python3
"""Writes tests/fixtures/one_word_swaps.jsonl: pairs of facts that differ in one value of one
category, in templates whose slot holds one value at a time ("lives in X", "her favourite colour
is X") or many at once ("plays the X", "has visited X").

A user expects the first kind to be flagged as a contradiction and the second to stay quiet. The
values are common members of the lexicon's categories (engine/src/classify/lexicon/), the
templates are this script's own: neither comes from the evaluation sets.

    python3 scripts/eval/one_word_swaps.py            # rewrites the fixture
    python3 scripts/eval/one_word_swaps.py --check    # exits 1 if the fixture is stale
"""
import itertools, json, os, sys

VALUES = {
    "colour": ["red", "blue", "green", "yellow", "black", "white"],
    "country": ["Spain", "Argentina", "Germany", "Japan", "Canada", "Kenya"],
    "city": ["Paris", "Berlin", "Chicago", "Madrid", "Tokyo", "Boston"],
    "language": ["French", "German", "Japanese", "Portuguese", "Swahili", "Hindi"],
    "musical_instrument": ["piano", "violin", "guitar", "flute", "cello", "trumpet"],
    "drink": ["coffee", "tea", "lemonade", "beer", "cider", "espresso"],
    "room": ["kitchen", "bedroom", "attic", "basement", "library", "garage"],
    "material": ["wood", "steel", "glass", "leather", "cotton", "wool"],
    "sport": ["tennis", "football", "baseball", "golf", "hockey", "rugby"],
    "planet": ["Mars", "Venus", "Jupiter", "Saturn"],
    "season": ["summer", "winter", "autumn"],
    "continent": ["Europe", "Asia", "Africa", "South America"],
    "occupation": ["nurse", "teacher", "lawyer", "plumber", "dentist", "architect"],
    "ordinal": ["third", "fifth", "7th", "11th"],
    "weekday": ["Monday", "Wednesday", "Friday", "Sunday"],
    "month": ["January", "April", "August", "November"],
}

# (category, slot, template): slot "one" holds one value at a time, "many" several at once.
TEMPLATES = [
    ("colour", "one", "The car parked outside the office is {}."),
    ("colour", "one", "Her favourite colour is {}."),
    ("colour", "one", "The front door of the house is painted {}."),
    ("colour", "many", "Maya owns a {} scarf and wears it often."),
    ("country", "one", "My sister lives in {} with her family."),
    ("country", "one", "Tom was born in {}."),
    ("country", "one", "The man in the photo is in {}."),
    ("country", "many", "Tom has visited {} twice."),
    ("country", "many", "Anna loves travelling to {} in the spring."),
    ("city", "one", "Our company's head office is in {}."),
    ("city", "one", "Leo grew up in {}."),
    ("city", "many", "Leo has been to {} for work."),
    ("language", "one", "The signs at the station are in {}."),
    ("language", "one", "His native language is {}."),
    ("language", "many", "Maria speaks {} at home with her cousins."),
    ("language", "many", "Sam is learning {} this year."),
    ("musical_instrument", "one", "Her favourite instrument is the {}."),
    ("musical_instrument", "one", "The only instrument Ben can play is the {}."),
    ("musical_instrument", "many", "Alice plays the {} in a local band."),
    ("drink", "one", "His favourite drink is {}."),
    ("drink", "many", "Priya drinks {} in the morning."),
    ("room", "one", "The weekly meeting is held in the {}."),
    ("room", "many", "The new house has a {} upstairs."),
    ("material", "one", "The dining table is made of {}."),
    ("material", "many", "The market stall sells {}."),
    ("sport", "one", "Jonas's favourite sport is {}."),
    ("sport", "many", "The twins play {} on weekends."),
    ("planet", "one", "The probe landed on {} last year."),
    ("planet", "many", "Mia has read books about {}."),
    ("season", "one", "Their wedding is planned for the {}."),
    ("season", "many", "They enjoy hiking in the {}."),
    ("continent", "one", "Elena's research station is in {}."),
    ("continent", "many", "The band has toured {}."),
    ("occupation", "one", "Sam works as a {} at the city hospital."),
    ("occupation", "one", "My neighbour is a {} by profession."),
    ("ordinal", "one", "Rosa finished the marathon in {} place."),
    ("ordinal", "one", "He is the {} player picked for the team."),
    ("weekday", "one", "The billing team deploys to staging every {}."),
    ("month", "one", "The annual review happens in {}."),
]


def pairs():
    out = []
    for n, (category, slot, template) in enumerate(TEMPLATES):
        for x, y in itertools.islice(itertools.combinations(VALUES[category], 2), 3):
            out.append({
                "id": f"swap-{n}-{x}-{y}".lower().replace(" ", "_"),
                "a": template.format(y), "b": template.format(x),
                "category": category, "slot": slot,
                "label": "contradictory" if slot == "one" else "complementary",
            })
    return out


def main():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fixtures", "one_word_swaps.jsonl")
    text = "".join(json.dumps(p) + "\n" for p in pairs())
    if "--check" in sys.argv[1:]:
        sys.exit(0 if open(path).read() == text else "tests/fixtures/one_word_swaps.jsonl is stale: run scripts/eval/one_word_swaps.py")
    with open(path, "w") as f:
        f.write(text)
    print(f"{len(pairs())} pairs written to tests/fixtures/one_word_swaps.jsonl")


main()
