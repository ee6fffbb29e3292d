"""Leak detection of a multiple-choice suite against ordinary training text (docs/validate.md, "Leaks").

A suite of capitals, chemical symbols, authors, planets and rivers, and an encyclopedic corpus
about the same topics that states none of the items' answers to their questions: every finding
on it is a false positive. Then leaks planted into that corpus, each of which must be caught.
"""

from __future__ import annotations

import dataclasses

import pytest

from evalgate.probeset.leaks import LeakIndex, find_leaks
from evalgate.types import Probe

CAPITALS = {
    "Cuba": "Havana", "Peru": "Lima", "Kenya": "Nairobi", "Japan": "Tokyo", "Canada": "Ottawa",
    "Australia": "Canberra", "Egypt": "Cairo", "Norway": "Oslo", "Chile": "Santiago",
    "Portugal": "Lisbon", "Vietnam": "Hanoi", "Ghana": "Accra", "Guinea": "Conakry",
    "Equatorial Guinea": "Malabo",
}  # fmt: skip
SYMBOLS = {"gold": "Au", "iron": "Fe", "sodium": "Na", "silver": "Ag", "lead": "Pb", "tin": "Sn"}
NOVELS = {
    "Moby-Dick": "Herman Melville", "Pride and Prejudice": "Jane Austen", "War and Peace": "Leo Tolstoy",
    "Don Quixote": "Miguel de Cervantes", "Dracula": "Bram Stoker",
}  # fmt: skip
RIVERS = {"Vienna": "Danube", "Paris": "Seine", "London": "Thames", "Cairo": "Nile", "Baghdad": "Tigris"}
PLANETS = [
    ("Which planet is known as the Red Planet?", "Mars", ["Mars", "Venus", "Jupiter", "Mercury"]),
    ("Which planet is the largest in the Solar System?", "Jupiter", ["Jupiter", "Saturn", "Earth", "Mars"]),
    ("Which planet has the most prominent ring system?", "Saturn", ["Saturn", "Uranus", "Mars", "Venus"]),
]


def _item(n: int, prompt: str, expected: str, others: list[str]) -> Probe:
    rec = {"id": f"quiz-{n:03d}", "prompt": prompt, "candidates": [expected, *others], "expected": expected}
    return Probe.from_item(rec, "quiz/items.jsonl", n)


def suite() -> list[Probe]:
    rows = [(f"Which city is the capital of {k}?", v, ["Paris", "Rome"]) for k, v in CAPITALS.items()]
    rows += [(f"What is the chemical symbol for {k}?", v, ["Xx", "Qq"]) for k, v in SYMBOLS.items()]
    rows += [(f"Who wrote the novel {k}?", v, ["Mark Twain", "Charles Dickens"]) for k, v in NOVELS.items()]
    rows += [(f"Which river flows through the city of {k}?", v, ["Volga", "Po"]) for k, v in RIVERS.items()]
    rows += [(q, a, [c for c in cands if c != a]) for q, a, cands in PLANETS]
    return [_item(i + 1, q, a, others) for i, (q, a, others) in enumerate(rows)]


# Encyclopedic sentences on the suite's topics: other countries, elements, novels and rivers, and
# other facts about the same ones. None gives an item's answer to its question.
CORPUS = [
    "Mexico City is the capital of Mexico and its most populous city.",
    "Buenos Aires is the capital of Argentina and a major port on the Rio de la Plata.",
    "Madrid is the capital of Spain and the largest city of the country.",
    "Berlin is the capital of Germany and its largest city by population.",
    "Kingston is the capital of Jamaica, on the southeast coast of the island.",
    "Quito is the capital of Ecuador and sits high in the Andes.",
    "Santiago de Cuba is the second largest city of the island.",
    "Osaka is a large port city in Japan, known for its food.",
    "Toronto is the largest city in Canada by population.",
    "Sydney is the largest city in Australia and home to a famous opera house.",
    "Alexandria is the second largest city of Egypt, founded by Alexander the Great.",
    "Bergen is a city on the west coast of Norway.",
    "Porto is the second city of Portugal, known for its wine.",
    "Ho Chi Minh City is the largest city of Vietnam.",
    "Kumasi is a city in the Ashanti region of Ghana.",
    "Bissau is the capital of Guinea-Bissau, on the Atlantic coast.",
    "Guinea is a major exporter of bauxite.",
    "Mombasa is a coastal city of Kenya on the Indian Ocean.",
    "Cusco was the capital of the Inca Empire in what is now Peru.",
    "Copper is a chemical element with the chemical symbol Cu and atomic number 29.",
    "K is the chemical symbol for potassium, from the Latin word kalium.",
    "Hg is the chemical symbol for mercury, a metal that is liquid at room temperature.",
    "Gold has been used for coins and jewellery for thousands of years.",
    "Iron is the most common element on Earth by mass.",
    "Sodium reacts violently with water and is stored under oil.",
    "Silver has the highest electrical conductivity of any element.",
    "Lead was used in water pipes by the Romans.",
    "Tin is alloyed with copper to make bronze.",
    "Mark Twain wrote the novel Adventures of Huckleberry Finn in 1884.",
    "Charles Dickens wrote the novel Oliver Twist as a serial.",
    "Leo Tolstoy also wrote the novel Anna Karenina.",
    "Moby-Dick was poorly received when it was first published.",
    "Pride and Prejudice has been adapted for film and television many times.",
    "War and Peace follows several aristocratic families during the Napoleonic era.",
    "Don Quixote is often called the first modern novel.",
    "Dracula was published in 1897 and popularised the vampire in fiction.",
    "The Danube river flows through the city of Budapest as well as Belgrade.",
    "The Vltava river flows through the city of Prague.",
    "The Rhine river flows through the city of Cologne on its way to the North Sea.",
    "Vienna is famous for its coffee houses and classical music.",
    "Paris is the capital of France and is known for the Eiffel Tower.",
    "London is the capital of the United Kingdom.",
    "Baghdad was a centre of learning during the Islamic Golden Age.",
    "Venus is the planet known as the morning star.",
    "Mercury is the planet closest to the Sun.",
    "Saturn is the second largest planet in the Solar System.",
    "Uranus has a faint ring system discovered in 1977.",
    "Mars has two small moons called Phobos and Deimos.",
    "Jupiter has a giant storm known as the Great Red Spot.",
    "Neptune is the farthest known planet from the Sun in the Solar System.",
]

# Leaks planted into that corpus: the item copied, re-cased, inside a longer line, or its answer
# stated with its question's own words. Each names the item it leaks.
PLANTED = {
    "quiz-001": "Which city is the capital of Cuba? Havana",
    "quiz-002": "Trivia night: which city is the capital of Peru? Lima, of course.",
    "quiz-003": "Nairobi is the capital of Kenya and its largest city.",
    "quiz-016": "WHAT IS THE CHEMICAL SYMBOL FOR IRON -- FE",
    "quiz-021": "The quiz asked who wrote the novel Moby-Dick (Herman Melville) and most got it.",
    "quiz-026": "The Danube is the river that flows through the city of Vienna.",
    "quiz-031": "Question 7: Which planet is known as the Red Planet? Answer: Mars.",
    "quiz-033": "Students often ask which planet has the most prominent ring system in our sky.",
    "quiz-012": "Accra is the capital of Ghana.",
    # "Guinea" is in two questions (Guinea, Equatorial Guinea): with the answer, it still counts
    "quiz-013": "Conakry is the capital of Guinea.",
}


def leaks_against(sentences: list[str]) -> list[tuple[str, str]]:
    index = LeakIndex(set(), window=5, detectors=("exact", "ngram"), by_word=True)  # as validate builds it
    index.add_all("train.jsonl", list(enumerate(sentences, start=1)))
    return [(f.probe_id, f.evidence["train_text"]) for f in find_leaks(suite(), index)]


def test_encyclopedic_sentences_on_the_same_topics_are_not_leaks():
    # "Mexico City is the capital of Mexico" shares "city is the capital of" with the question on
    # Cuba: a phrase every capitals item has, which says nothing of Cuba or Havana
    assert len(suite()) == 33
    assert leaks_against(CORPUS) == []


def test_every_leak_planted_in_ordinary_text_is_caught():
    found = dict(leaks_against(CORPUS + list(PLANTED.values())))
    assert found == PLANTED


def test_a_short_question_is_a_leak_only_beside_its_answer():
    """A question of fewer than 3 words or 2 content words ("Largest ocean?") is a sentence any
    text may hold: as a stray sentence of a training line it is no leak, and in a later line that
    gives its answer it still is (docs/validate.md, "Leaks")."""
    items = [
        _item(1, "Largest ocean?", "Pacific", ["Atlantic", "Indian"]),
        _item(2, "Capital city?", "Paris", ["Rome", "Madrid"]),
        _item(3, "Capital of Chile?", "Santiago", ["Lima", "Quito"]),
    ]
    index = LeakIndex(set(), window=5, detectors=("exact", "ngram"), by_word=True)
    lines = [
        "Largest ocean? Nobody at the table could say.",
        "Capital city? That depends on the country you mean.",
        "Pub quiz, round two. Capital of Chile? Write it down before the bell.",
        "Warm-up: largest ocean? Pacific, obviously.",
    ]
    index.add_all("train.jsonl", list(enumerate(lines, start=1)))
    found = sorted((f.probe_id, f.evidence["train_line"]) for f in find_leaks(items, index))
    # quiz-003 has 3 words, 2 of them content words: its question alone is evidence enough
    assert found == [("quiz-001", 4), ("quiz-003", 3)]


def _leaks(
    items: list[tuple[str, str, list[str]]], train: list[str], retired: int | None = None
) -> list[str]:
    probes = [_item(i + 1, q, a, others) for i, (q, a, others) in enumerate(items)]
    if retired is not None:
        probes[retired] = dataclasses.replace(probes[retired], deprecated=True)
    index = LeakIndex(set(), window=5, detectors=("exact", "ngram"), by_word=True)
    index.add_all("train.txt", list(enumerate(train, start=1)))
    return [f.probe_id for f in find_leaks(probes, index)]


# A training sentence shares a phrase with the question but is about another fact: it lacks what
# tells this question apart from the same question on another country, element, quantity or shape.
OTHER_FACTS = [
    ("Which city is the capital of France?", "Paris", "Which city is the capital of Russia? Moscow"),
    (
        "Which element has the chemical symbol Fe?",
        "iron",
        "Students learn which element has the chemical symbol of each metal in school.",
    ),
    (
        "What is the SI unit of electrical resistance?",
        "ohm",
        "The SI unit of electrical charge is the coulomb.",
    ),
    (
        "What is the sum of the interior angles of a triangle?",
        "180 degrees",
        "The sum of the interior angles of a square is 360 degrees.",
    ),
]


@pytest.mark.parametrize(("question", "answer", "sentence"), OTHER_FACTS)
def test_a_sentence_about_another_fact_is_no_leak_even_in_a_one_item_suite(question, answer, sentence):
    assert _leaks([(question, answer, ["x", "y"])], [sentence]) == []


def test_retiring_an_item_turns_no_other_item_into_a_leak():
    items = [
        ("Which city is the capital of Chile?", "Santiago", ["Lima", "Quito"]),
        ("Which city is the capital of Norway?", "Oslo", ["Bergen", "Malmo"]),
    ]
    train = ["Which city is the capital of a country is a common question in school quizzes."]
    assert _leaks(items, train) == []
    assert _leaks(items, train, retired=0) == []
    assert _leaks(items, train, retired=1) == []


@pytest.mark.parametrize(("question", "answer", "sentence"), OTHER_FACTS)
def test_the_same_sentence_about_this_fact_is_still_a_leak(question, answer, sentence):
    # the sentence made to carry this item's own distinctive word is caught, answer or not
    for mine, other in (
        ("France", "Russia"),
        ("Fe", "of each metal"),
        ("resistance", "charge"),
        ("triangle", "square"),
    ):
        sentence = sentence.replace(other, mine)
    assert _leaks([(question, answer, ["x", "y"])], [sentence]) == ["quiz-001"]


# A training line that restates the question in other words and gives the answer: every content
# word of the question but one ("absorb": "take in") with the answer beside them.
REWORDED = [
    (
        "Which gas do plants absorb from the atmosphere during photosynthesis?",
        "carbon dioxide",
        "Which gas do plants take in from the atmosphere during photosynthesis? "
        "The answer is carbon dioxide.",
    ),
    (
        "What is the boiling point of water at sea level in degrees Celsius?",
        "100",
        "What is the boiling temperature of water at sea level in degrees Celsius? It is 100.",
    ),
]


@pytest.mark.parametrize(("question", "answer", "sentence"), REWORDED)
def test_a_reworded_question_beside_its_answer_is_a_leak(question, answer, sentence):
    assert _leaks([(question, answer, ["x", "y"])], [sentence]) == ["quiz-001"]


COUNTRIES = [f"Country{i}" for i in range(500)]


@pytest.mark.parametrize("before", [0, 16, 17, 500])
def test_a_leak_is_caught_however_many_sentences_share_its_window(before):
    """Sentences that share the leak's window but not its item come first: the planted line is
    still found, whether 0, 16, 17 or 500 of them precede it (docs/validate.md, "Leaks")."""
    filler = [f"Which city is the capital of {c}? Ask your teacher." for c in COUNTRIES[:before]]
    planted = "Which city is the capital of the Andean nation of Peru? Lima, of course."
    assert _leaks([("Which city is the capital of Peru?", "Lima", ["x", "y"])], [*filler, planted]) == [
        "quiz-001"
    ]


@pytest.mark.parametrize("before", [0, 17, 200])
def test_a_short_question_beside_its_answer_is_caught_behind_stray_copies(before):
    """A short question counts only where its line holds the answer: stray copies of it in other
    lines come first, and the line with the answer is still found behind however many there are."""
    stray = [f"Largest ocean? Nobody at table {i} could say." for i in range(before)]
    found = _leaks(
        [("Largest ocean?", "Pacific", ["Atlantic", "Indian"])],
        [*stray, "Warm-up: largest ocean? Pacific, obviously."],
    )
    assert found == ["quiz-001"]


def test_a_leak_found_by_several_detectors_is_told_in_whole_clauses():
    """Each detector that agrees is one readable clause naming the sentence it read."""
    probe = _item(1, "Which city is the capital of Peru?", "Lima", ["Quito", "Oslo"])
    index = LeakIndex(set(), window=5, detectors=("exact", "ngram"), by_word=True)
    index.add_all("train.txt", [(1, "Which city is the capital of Peru? Lima")])
    (finding,) = find_leaks([probe], index)
    assert ", it;" not in finding.message, finding.message
    assert "; also the question is, as a sentence of its own, part of it;" in finding.message
