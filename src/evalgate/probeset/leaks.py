"""Leak detection against the training material: an index built once, three detectors.

The index holds, for every training sentence, its exact key and its template key (hashes of the
normal forms of probeset/text.py, the same functions the corpus generator decontaminates with) and
every window of `window` word tokens, each mapped to the first (file, line) that produced it.
Checking a probe is then a handful of dictionary look-ups: O(probes + sentences), never a
probe x sentence scan (10,000 probes against 100,000 sentences: see bench/validate.py).

The detectors read `fill(prompt, expected)`, the sentence the model would see completed, and,
where the suite has a prompt template, the rendered text the scorer builds (the template around
the prompt, the answer in place: `Question: Capital of Peru?\nAnswer: Lima`):
  exact     the probe's word tokens (punctuation and case aside) equal a training sentence's, or
            one sentence or comma-separated clause of a longer training line (a short probe has
            fewer tokens than the n-gram window: this is what protects it); a question item's
            question alone is also matched against whole lines and the sentences of longer ones
            (a question under 3 words or 2 content words only where the line holds its answer);
  template  the same after content nouns become <NOUN>, verb forms and time markers kept;
  ngram     the probe shares at least one window of `window` normalised tokens (docs/validate.md).
            For a multiple-choice item the shared window must involve what the item asks: cover
            a token of the expected answer, or come from a training sentence that holds what
            identifies the question - every content word of the question, or, where the sentence
            also holds the answer, every one but the word the question asks for ("city" in
            "Which city is the capital of Ghana?": "Accra is the capital of Ghana"), and of 3 or
            more such words all but one (a question reworded: "take in" for "absorb"). A phrase
            many items share ("city is the capital of") is boilerplate, and a training sentence
            about Mexico City does not leak the question about Cuba. The rule reads the item and
            the sentence only, never the rest of the suite: retiring or adding an item changes
            no other item's findings.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from evalgate.probeset.records import record_id
from evalgate.probeset.scripts import skeleton
from evalgate.probeset.text import (
    FUNCTION_WORDS,
    clause_keys_normal,
    fill,
    masked_tokens,
    ngrams,
    sentence_keys_normal,
    tokens_normal,
)
from evalgate.types import BLANK, Finding, Probe

# (context, suffix) of the rendered text around the answer, as the scorer renders it: None where
# the suite has no template of its own (the rendered text is then the filled prompt)
Renderer = Callable[[Probe], tuple[str, str] | None]

# Every text the detectors read, training sentence and probe alike, is folded through the look-alike
# skeleton (probeset/scripts.py: the normal form, each Cyrillic or Greek letter that looks like a
# Latin one replaced by it), so a question spelt with a Cyrillic `а` meets its Latin copy in the
# training data (docs/validate.md, "Scripts and look-alikes"). Both sides are folded alike, so a
# Russian or Greek question still meets its own copy.
fold = skeleton

DETECTORS = ("exact", "template", "ngram")
DEFAULT_WINDOW = 5

HINT = (
    "rewrite the probe (if it was sealed: deprecate it and add a replacement with a new id), or take "
    "the sentence out of the training data; `leaks: {policy: exclude}` scores the strict subset instead"
)


# The question alone (a question item's prompt as a sentence of a training line) is a leak by
# itself from this length on: 3 word tokens, 2 of them content words ("Capital of Chile?"). A
# shorter one ("Largest ocean?") counts only where the same training line holds the answer.
QUESTION_MIN_WORDS = 3
QUESTION_MIN_CONTENT_WORDS = 2


@dataclass(frozen=True)
class Source:
    """Where a training sentence was read."""

    file: str
    line: int
    text: str

    def where(self) -> str:
        return f"{self.file}:{self.line}"


class LeakIndex:
    """Hash maps over the training sentences; first occurrence wins, so evidence is stable."""

    def __init__(
        self,
        keep: frozenset[str] | set[str],
        window: int = DEFAULT_WINDOW,
        detectors: Sequence[str] = DETECTORS,
        by_word: bool = False,
    ):
        """`by_word` (a multiple-choice suite's index): also remember, for every word token,
        the sentences that hold it, so that a multiple-choice item's window is judged against every
        sentence that could identify the item (`_asks`), found through the item's answer and its
        rarest question word - never a capped list of the first sentences of a window, which the
        training data could fill with others (docs/validate.md, "Leaks"). Memory: one 4-byte
        sentence number per distinct token of each sentence, and the sentence kept."""
        unknown = set(detectors) - set(DETECTORS)
        if unknown or window < 1:
            raise ValueError(f"bad leak detector settings: {sorted(unknown)}, window {window}")
        self.keep = frozenset(fold(k) for k in keep)
        self.window = window
        self.detectors = tuple(d for d in DETECTORS if d in detectors)
        self.n_sentences = 0
        self._exact: dict[str, Source] = {}
        self._clauses: dict[str, Source] = {}
        self._sentences: dict[str, Source] = {}
        self._template: dict[str, Source] = {}
        self._ngrams: dict[str, Source] = {}
        self.by_word = by_word
        # sentence number -> sentence, and word token -> the numbers of the sentences holding it
        self._all: list[Source] = []
        self._by_word: dict[str, array[int]] = {}

    def add(self, file: str, line: int, sentence: str) -> None:
        self.n_sentences += 1
        src = Source(file, line, sentence)
        # normalised once; the keys are the normal forms of probeset/text.py, kept as strings (a dict
        # hashes them anyway)
        norm = fold(sentence)
        tokens = tokens_normal(norm)
        if self.by_word:
            number = len(self._all)
            self._all.append(src)
            for tok in set(tokens):
                self._by_word.setdefault(tok, array("I")).append(number)
        if "exact" in self.detectors:
            self._exact.setdefault(" ".join(tokens), src)
            for key in clause_keys_normal(norm):
                self._clauses.setdefault(key, src)
            for key in sentence_keys_normal(norm):
                self._sentences.setdefault(key, src)
        if "template" in self.detectors:
            self._template.setdefault(" ".join(masked_tokens(tokens, self.keep)), src)
        if "ngram" in self.detectors:
            grams = self._ngrams
            for gram in ngrams(tokens, self.window):
                grams.setdefault(" ".join(gram), src)

    def _candidates(self, *needs: Sequence[str]) -> list[Source]:
        """Every sentence that may hold all tokens of one of `needs` (those on the posting list of
        each need's rarest token; the caller checks the sentence), first read first (`by_word`)."""
        numbers: set[int] = set()
        for need in needs:
            postings: list[array[int]] = [self._by_word.get(tok, array("I")) for tok in set(need)]
            if postings:
                numbers.update(postings[min(range(len(postings)), key=lambda i: len(postings[i]))])
        return [self._all[n] for n in sorted(numbers)]

    def _question_sources(self, key: str, answer: Sequence[str]) -> list[Source]:
        """The training lines that are, or have a sentence that is, `key`, first read first; with
        `by_word`, every line beside the first that has it and holds `answer` as well."""
        found = [self._exact.get(key), self._sentences.get(key)]
        if self.by_word and answer:
            found += [
                src
                for src in self._candidates(answer)
                if key in sentence_keys_normal(fold(src.text))
                or key == " ".join(tokens_normal(fold(src.text)))
            ]
        return list(dict.fromkeys(src for src in found if src is not None))

    def _identifying(self, asks: Asks | None) -> list[tuple[Source, set[str]]]:
        """The sentences that hold what identifies the item (`_asks` beside no answer window),
        with their n-gram windows, first read first; none without `by_word`."""
        if asks is None or not self.by_word:
            return []
        found = []
        for src in self._candidates(asks.answer, sorted(asks.words)):
            if _asks(range(0), range(0), asks, src):
                grams = {" ".join(g) for g in ngrams(tokens_normal(fold(src.text)), self.window)}
                found.append((src, grams))
        return found

    def add_all(self, file: str, sentences: Iterable[tuple[int, str]]) -> None:
        for line, sentence in sentences:
            self.add(file, line, sentence)

    def check(self, probe: Probe, render: Renderer | None = None) -> list[Finding]:
        """One finding per leaking probe, naming every detector that fired (deprecated: none).

        A multiple-choice item's n-gram window only counts when it covers the answer or the
        training sentence holds what identifies the question (`_asks`). `render`: the scorer's
        (context, suffix) around the answer.
        """
        if probe.deprecated:
            return []
        filled: tuple[str, list[str], range | None]
        if probe.is_item:
            filled = _answer_span(*_around(probe.prompt), probe.expected)
        else:  # a verb-form probe: every shared window counts, the answer's place is not needed
            text = fill(probe.prompt, probe.expected)
            filled = (text, tokens_normal(fold(text)), None)
        asks = Asks.of(probe) if probe.is_item else None
        # (what is read, its text, its tokens, the answer's place)
        texts: list[tuple[str, str, list[str], range | None]] = [("the filled prompt", *filled)]
        around = render(probe) if render is not None else None
        if around is not None:
            rendered = _answer_span(*around, probe.expected)
            if rendered[1] != filled[1]:  # a template that adds words: check what the model reads
                # the template's own words are every item's: never part of what identifies it
                texts.append(("the rendered prompt", *rendered))
        hits: list[tuple[str, str, str, Source, dict[str, object]]] = []
        for subject, text, tokens, span in texts:
            hits.extend(self._hits(subject, text, tokens, span, asks))
        if probe.is_item and BLANK not in probe.prompt and "exact" in self.detectors:
            # the question alone, as a whole line or one sentence of a longer one: a question ends
            # in "?", so a line that goes on after it never holds it as the filled text's clause.
            # A short question ("Largest ocean?") is a sentence any text may have: it counts only
            # where its training line also holds the answer (docs/validate.md, "Leaks").
            question = tokens_normal(fold(probe.prompt))
            answer = tokens_normal(fold(probe.expected))
            key = " ".join(question)
            content = [t for t in question if t not in FUNCTION_WORDS]
            specific = len(question) >= QUESTION_MIN_WORDS and len(content) >= QUESTION_MIN_CONTENT_WORDS
            if content:
                for src in self._question_sources(key, answer):
                    if specific or _holds(tokens_normal(fold(src.text)), answer):
                        what = "is, as a sentence of its own, part of"
                        evidence = {"contained": True, "question": key}
                        hits.append(("exact", "the question", what, src, evidence))
                        break
        if not hits:
            return []
        hits.sort(key=lambda h: DETECTORS.index(h[0]))  # stable: the filled prompt first within a detector
        # One problem, one finding: the detectors that agree are listed in it (docs/probes.md).
        detector, subject, what, src, _ = hits[0]
        text = next((t[1] for t in texts if t[0] == subject), probe.prompt)
        message = f"{subject} {_clip(text)!r} {what} training sentence {src.where()} {_clip(src.text)!r}"
        for _, other_subject, more, other, _ in hits[1:]:
            # each `what` ends in a preposition or verb that takes "it" or "training sentence ..."
            message += f"; also {'' if other_subject == subject else other_subject + ' '}{more} " + (
                "it" if other == src else f"training sentence {other.where()} {_clip(other.text)!r}"
            )
        merged: dict[str, object] = {}
        for *_, ev in reversed(hits):
            merged.update(ev)
        detectors = list(dict.fromkeys(h[0] for h in hits))
        return [
            Finding(
                f"leak-{detector}",
                message + f" (detectors: {', '.join(detectors)})",
                probe.file,
                probe.line,
                probe.id,
                "prompt",
                HINT,
                evidence={
                    "probe_text": text,
                    "train_file": src.file,
                    "train_line": src.line,
                    "train_text": _clip(src.text, 500),
                    "detectors": detectors,
                    **merged,
                },
            )
        ]

    def _hits(
        self,
        subject: str,
        text: str,
        tokens: list[str],
        span: range | None,
        asks: Asks | None,
    ) -> list[tuple[str, str, str, Source, dict[str, object]]]:
        """The detectors that fire on one reading of the probe (filled or rendered).

        `span`: where the answer's tokens are (None: every shared n-gram window counts);
        `asks`: what identifies an item's question (None: only a window over the answer counts).
        """
        joined = " ".join(tokens)
        hits: list[tuple[str, str, str, Source, dict[str, object]]] = []
        ev: dict[str, object] = {} if subject == "the filled prompt" else {"rendered": text}
        if "exact" in self.detectors:
            if src := self._exact.get(joined):
                hits.append(("exact", subject, "equals (ignoring case, whitespace and punctuation)", src, ev))
            elif src := self._clauses.get(joined):
                what = "is one sentence or clause of"
                hits.append(("exact", subject, what, src, {"contained": True, **ev}))
        form = " ".join(masked_tokens(tokens, self.keep))
        if "template" in self.detectors and (src := self._template.get(form)):
            what = f"has the same template {form!r} as"
            hits.append(("template", subject, what, src, {"template": form, **ev}))
        if "ngram" in self.detectors:
            # the sentences that identify the item (`_asks`), each with its windows: found once,
            # through the item's answer and question words, the first time a window needs them
            identify: list[tuple[Source, set[str]]] | None = None
            for start, gram in enumerate(ngrams(tokens, self.window)):
                key = " ".join(gram)
                at = range(start, start + self.window)
                src = self._ngrams.get(key)
                if src is not None and span is not None and not _asks(at, span, asks, src):
                    if identify is None:
                        identify = self._identifying(asks)
                    src = next((c for c, grams in identify if key in grams), None)
                if src is not None:
                    what = f"shares the {self.window}-gram {key!r} with"
                    hits.append(("ngram", subject, what, src, {"ngram": key, "window": self.window, **ev}))
                    break  # the first shared window is the evidence
        return hits


def _around(prompt: str) -> tuple[str, str]:
    """(before, after) the answer in the filled prompt (`fill`: the blank, or after a question)."""
    if BLANK not in prompt:
        return prompt + " ", ""
    before, after = prompt.split(BLANK, 1)
    return before, after


def _answer_span(before: str, after: str, answer: str) -> tuple[str, list[str], range]:
    """(the text, its normalised tokens, the positions of the answer's tokens among them)."""
    text = before + answer + after
    head = tokens_normal(fold(before))
    upto = tokens_normal(fold(before + answer))
    start = len(head)
    if head and upto[: len(head)] != head:
        start -= 1  # the answer glued to the word before it: that token is partly the answer
    return text, tokens_normal(fold(text)), range(max(start, 0), len(upto))


# Where a training sentence holds the answer, it may lack this many of the question's other content
# words and still leak the item, if the question has at least REWORDED_MIN_WORDS of them and the
# word it lacks is no name or number of the question ("Vienna", "144": what tells the question
# apart from the same question on another city or number; docs/validate.md, "Leaks").
REWORDED_WORDS = 1
REWORDED_MIN_WORDS = 4

# the words that open what a question asks for ("which city", "what element")
WH_WORDS = frozenset(
    "what which who whom whose where when how qué quién cuál cuáles dónde cuándo cómo".split()
)


@dataclass(frozen=True)
class Asks:
    """What identifies an item's question, for `_asks`: the question's content words (`words`),
    those but the word the question asks for (`given_answer`: "city" in "Which city is the
    capital of Ghana?", which the answer stands for in "Accra is the capital of Ghana"), and the
    answer's tokens, and `names`: the question's content words that are names or numbers."""

    words: frozenset[str]
    given_answer: frozenset[str]
    answer: tuple[str, ...]
    names: frozenset[str] = frozenset()

    @classmethod
    def of(cls, probe: Probe) -> Asks:
        question = tokens_normal(fold(probe.prompt.replace(BLANK, " ")))
        words = [t for t in question if t not in FUNCTION_WORDS]
        asked: set[str] = set()
        for i, tok in enumerate(question):
            if tok in WH_WORDS:  # the first content word after it names what is asked
                asked = {next((t for t in question[i + 1 :] if t not in FUNCTION_WORDS), "")}
                break
        answer = tuple(tokens_normal(fold(probe.expected)))
        # the question's names and numbers: a capitalised word after its first, or one with a digit
        names = {
            tok
            for word in probe.prompt.replace(BLANK, " ").split()[1:]
            if word[:1].isupper() or any(ch.isdigit() for ch in word)
            for tok in tokens_normal(fold(word))
        }
        return cls(frozenset(words), frozenset(words) - asked, answer, frozenset(names) & frozenset(words))


def _asks(at: range, span: range, asks: Asks | None, src: Source) -> bool:
    """Whether a window of an item's text involves what the item asks (docs/validate.md, "Leaks"):
    it covers the answer, or the training sentence holds every content word of the question - or,
    where it also holds the answer, every one but the word the question asks for, and of 3 or more
    such words all but one (a reworded question: "take in" for "absorb"). "Which city is the
    capital of France?" shares "which city is the capital" with "Which city is the capital of
    Russia? Moscow", which says nothing of France: no leak. Only the item and the sentence decide,
    never how many other items share a word, so a small suite, or retiring one of its items,
    changes nothing."""
    if any(i in span for i in at):
        return True
    if asks is None:
        return False
    sentence = tokens_normal(fold(src.text))
    if not _holds(sentence, asks.answer):
        return bool(asks.words) and asks.words <= set(sentence)
    # beside the answer, a question reworded by one word ("take in" for "absorb") still leaks it;
    # a short question must have them all ("capital", "Ghana"), and a name or number always
    given = asks.given_answer
    missing = given - set(sentence)
    if not given or missing & asks.names:
        return not missing and bool(given)
    return len(missing) <= (REWORDED_WORDS if len(given) >= REWORDED_MIN_WORDS else 0)


def _holds(tokens: Sequence[str], part: Sequence[str]) -> bool:
    """Whether `part` is a run of consecutive tokens of `tokens`."""
    n = len(part)
    return n > 0 and any(list(tokens[i : i + n]) == list(part) for i in range(len(tokens) - n + 1))


def _clip(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def find_leaks(probes: Iterable[Probe], index: LeakIndex, render: Renderer | None = None) -> list[Finding]:
    """Every probe checked, each on its own (an item's findings never depend on the others)."""
    out: list[Finding] = []
    for probe in probes:
        out.extend(index.check(probe, render))
    return out


def leak_detectors(
    detectors: Sequence[str], has_train: bool, grammar_read: bool
) -> tuple[list[str] | None, list[Finding]]:
    """(the detectors to run, None to skip leak detection; the warnings saying what was skipped)."""
    if not detectors:
        return None, [
            Finding(
                "leaks-skipped",
                "leak detection is off (leaks.detectors is empty in the configuration)",
                hint="name detectors to check for leaks: `leaks: {detectors: [exact, template, ngram]}`",
            )
        ]
    if not has_train:
        return None, [
            Finding(
                "leaks-skipped",
                "no training files are configured: leak detection was skipped",
                hint="name the training material under `train:` in evalgate.yml or with --train",
            )
        ]
    run = list(detectors)
    if not grammar_read and "template" in run:
        # without the verb table every verb form would be masked as a noun: a flood of false leaks
        run.remove("template")
        return run, [
            Finding(
                "leaks-skipped",
                "the template leak detector was skipped: it keeps verb forms, which come from the grammar "
                "table, and that could not be read",
                hint="fix the grammar table (see its finding); the exact and n-gram detectors ran",
            )
        ]
    return run, []


def leak_policy(policy: str, leaks: Sequence[Finding]) -> tuple[frozenset[str], list[Finding], list[Finding]]:
    """(the ids left out, the blocking findings, the warnings) under `leaks.policy`: "refuse"
    blocks on every leak, "exclude" leaves the leaking probes out of the gated series."""
    if policy != "exclude":
        return frozenset(), list(leaks), []
    excluded = frozenset(f.probe_id for f in leaks if f.probe_id)
    if not excluded:
        return excluded, [], []
    warning = Finding(
        "leaks-excluded",
        f"{len(excluded)} leaking probe(s) left out (leaks.policy: exclude); the gate reads "
        "the strict subset",
        hint="the report shows both series; fix the leaks to score the whole set",
    )
    return excluded, [], [warning]


def leak_stand_ins(records: Sequence[tuple[int, dict]], parsed: Sequence[Probe], shown: str) -> list[Probe]:
    """Records the schema refused whose prompt and expected still read as text.

    The leak detectors only need those two, so a leak is reported in the same run as the schema
    error instead of after it is fixed. The stand-in is used for nothing else.
    """
    done = {p.line for p in parsed}
    out = []
    for line, rec in records:
        prompt, expected = rec.get("prompt"), rec.get("expected")
        if line in done or rec.get("deprecated") is True:
            continue
        if isinstance(prompt, str) and isinstance(expected, str):
            pid = record_id(rec) or ""
            out.append(
                Probe(
                    pid,
                    language="",
                    verb="",
                    regularity="",
                    tense="",
                    person="",
                    label="",
                    category="",
                    prompt=prompt,
                    candidates=(),
                    expected=expected,
                    file=shown,
                    line=line,
                )
            )
    return out
