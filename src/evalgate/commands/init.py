"""`evalgate init --suite NAME --items FILE [--from mmlu|arc|hellaswag] [--map MAPPING] --checkpoint DIR
[--train FILE ...] [--test FILE] [--slices DIM,DIM] [--leak-policy refuse|exclude] [--leak-window N]
[--action OWNER/evalgate@REF] [--owners @ORG/TEAM ...] [--shards N] [--runner LABEL ...] [--force]`.

Sets up the gate in the current folder (the repository's root), from one multiple-choice suite:

    evalgate.yml                              the configuration: the suite, `test: null` (or --test),
                                              the checkpoint, `baseline: baselines/NAME.json`
    evalgate/NAME/items.jsonl                 the items, imported as `probes import` imports them
    evalgate/NAME/MANIFEST.json               sealed (version, file hashes, probe lock)
    baselines/NAME.json                       the first baseline, made as `baseline update` makes it
    .github/workflows/eval-gate.yml           the gate on every pull request (with --shards N, an
                                              Actions matrix of N scoring jobs and a merge job `gate`)
    .github/workflows/eval-gate-comment.yml   the sticky comment, posted from the trusted side
    .github/workflows/badge.yml               the badge (and the score cache) on pushes to main
    .github/workflows/update-baseline.yml     the labelled baseline update: the label's request,
    .github/workflows/update-baseline-apply.yml   the update it starts (workflow_run), and
    .github/workflows/void-labels.yml         the labels' removal on a push (docs/approval.md)
    .github/CODEOWNERS                        the gate's inputs, each a code owners' review (--owners;
                                              without it the lines are written commented out); an
                                              existing file keeps its lines, init's block is added
                                              (or replaced, between its markers)
    .gitignore                                the output folder (`/evalgate-out/`), added once:
                                              created, or appended to and otherwise kept

In a folder whose evalgate.yml already has `suites:` (and without --force), the suite is added to
that file instead (`_add_suite`): its entry appended to the text, the rest kept, every suite
rescored into the configured baseline, the workflows left alone (docs/suites.md).

All or nothing: everything is checked, imported, sealed and scored before any file is written.
Every file is then staged beside its target (`.NAME.evalgate-init`) and moved into place,
evalgate.yml last; a failure removes what was staged. The import is probeset_io.import_items
(shared with `probes import --suite`), the baseline pipeline/'s (shared with `baseline update`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from evalgate import release
from evalgate.commands._args import scorer_factory
from evalgate.config import CONFIG_FILENAME, load_config, read_config_file
from evalgate.console import Console
from evalgate.edges.checkpoint_ref import is_reference_path
from evalgate.edges.files import atomic_write_bytes, dump_json
from evalgate.errors import EXIT_PASS, EXIT_REFUSED, RefusedError
from evalgate.gate import power
from evalgate.github.workflows import (
    ACTION,
    LABEL_PATTERN,
    MAX_SHARDS,
    badge_workflow,
    comment_workflow,
    gate_workflow,
    sharded_gate_workflow,
    update_baseline_apply_workflow,
    update_baseline_workflow,
    void_labels_workflow,
)
from evalgate.pipeline import baseline_document, baseline_outcome, perplexity_checks
from evalgate.pipeline.scoring import score
from evalgate.probeset.import_map import ImportMap
from evalgate.probeset.jsonl import parse_jsonl
from evalgate.probeset_io import (
    ItemImport,
    config_input,
    import_items,
    import_mapping,
    read_edit_input,
    sealed_manifest,
    validate,
)

_SUITE = re.compile(r"[a-z][a-z0-9_-]{0,39}")  # a suite's name in evalgate.yml (config schema)
_DIM = re.compile(r"[a-z][a-z0-9_]{0,39}")  # a slice dimension's name (config and item schemas)
STAGED_SUFFIX = ".evalgate-init"
CODEOWNERS = ".github/CODEOWNERS"
GITIGNORE = ".gitignore"
# The workflows init writes (.github/workflows/NAME), with what each is said to do when it is done.
WORKFLOWS = {
    "eval-gate.yml": "the gate on every pull request",
    "eval-gate-comment.yml": "the gate's report as the PR's sticky comment (trusted side)",
    "badge.yml": "the badge, on every push to main",
    "update-baseline.yml": "the label evalgate:update-baseline asks for a new baseline",
    "update-baseline-apply.yml": "then the baseline is rewritten (environment baseline-push)",
    "void-labels.yml": "a push removes the approval labels",
}
# A code owner as CODEOWNERS names one: @user or @org/team (an e-mail address works too).
_OWNER = re.compile(
    r"@[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:/[A-Za-z0-9._-]{1,100})?|[^@\s]+@[^@\s]+\.[a-z]{2,}"
)
_PLAIN_PATH = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_./-]*")
BLOCK_START = "# >>> evalgate: the gate's inputs (written by `evalgate init`; docs/security.md)"
BLOCK_END = "# <<< evalgate"
HINT_FORCE = "pass --force to replace them (the items are then added to the suite's file, as an import)"


@dataclass(frozen=True)
class Layout:
    """Where init writes, under the current folder."""

    root: Path
    name: str

    @property
    def config(self) -> Path:
        return self.root / CONFIG_FILENAME

    @property
    def items(self) -> str:
        return f"evalgate/{self.name}/items.jsonl"

    @property
    def manifest(self) -> str:
        return f"evalgate/{self.name}/MANIFEST.json"

    @property
    def baseline(self) -> str:
        return f"baselines/{self.name}.json"

    @property
    def workflows(self) -> tuple[str, ...]:
        return tuple(f".github/workflows/{name}" for name in WORKFLOWS)

    @property
    def codeowners(self) -> Path:
        return self.root / CODEOWNERS

    @property
    def gitignore(self) -> Path:
        return self.root / GITIGNORE

    def files(self) -> list[str]:
        return [CONFIG_FILENAME, self.items, self.manifest, self.baseline, *self.workflows]


class _Staging:
    """Files written beside their targets, then moved into place together, or removed."""

    def __init__(self) -> None:
        self.staged: list[tuple[Path, Path]] = []  # (staged file, target)
        self.made: list[Path] = []  # folders created for them, parents first

    def add(self, target: Path, data: bytes) -> Path:
        missing = []
        folder = target.parent
        while not folder.exists():
            missing.append(folder)
            folder = folder.parent
        for folder in reversed(missing):
            folder.mkdir()
            self.made.append(folder)
        staged = target.with_name(f".{target.name}{STAGED_SUFFIX}")
        atomic_write_bytes(staged, data)
        self.staged.append((staged, target))
        return staged

    def commit(self) -> None:
        """Every target in place, the first one staged (evalgate.yml) last."""
        for staged, target in [*self.staged[1:], *self.staged[:1]]:
            os.replace(staged, target)
        self.staged, self.made = [], []

    def rollback(self) -> None:
        for staged, _ in self.staged:
            with contextlib.suppress(OSError):
                staged.unlink()
        for folder in reversed(self.made):
            with contextlib.suppress(OSError):
                folder.rmdir()  # only if still empty
        self.staged, self.made = [], []


def _suite_name(name: str) -> str:
    if not _SUITE.fullmatch(name):
        raise RefusedError(
            f"--suite {name!r}: a suite's name is 1-40 lower-case letters, digits, '_' and '-', "
            "starting with a letter",
            hint="e.g. --suite k8s (it names the folder evalgate/k8s/ and baselines/k8s.json)",
        )
    return name


def _refuse_existing(layout: Layout, force: bool) -> None:
    paths = {rel: layout.root / rel for rel in layout.files()}
    # A folder init must create or write into (.github, .github/workflows, evalgate/NAME,
    # baselines) that is a file: refused here, before any scoring, not an OSError at the end.
    blocked: dict[str, str] = {}
    for rel in layout.files():
        for parent in reversed(Path(rel).parents[:-1]):  # outermost first, the root left out
            p = layout.root / parent
            if (p.exists() or p.is_symlink()) and not p.is_dir():
                blocked.setdefault(parent.as_posix(), rel)
                break
    if blocked:
        said = [f"{folder}: not a folder; init writes {rel} inside it" for folder, rel in blocked.items()]
        raise RefusedError(
            "; ".join(said) + "; nothing was written",
            hint="move it out of the way first",
        )
    found = [rel for rel, p in paths.items() if p.exists() or p.is_symlink()]
    odd = [rel for rel in found if paths[rel].is_symlink() or not paths[rel].is_file()]
    # CODEOWNERS is kept and added to, never refused; but init writes a regular file there.
    owners = layout.codeowners
    if (owners.exists() or owners.is_symlink()) and (owners.is_symlink() or not owners.is_file()):
        odd.append(CODEOWNERS)
    ignore = layout.gitignore  # the same: kept and added to, a regular file
    if (ignore.exists() or ignore.is_symlink()) and (ignore.is_symlink() or not ignore.is_file()):
        odd.append(GITIGNORE)
    if odd:
        raise RefusedError(
            f"{', '.join(odd)}: not a regular file; init writes a file there",
            hint="move it out of the way first",
        )
    if found and not force:
        others = [rel for rel in found if rel != CONFIG_FILENAME]
        if CONFIG_FILENAME in found:
            what = f"{CONFIG_FILENAME} already exists" + (f" (and {', '.join(others)})" if others else "")
        else:
            what = f"{', '.join(others)} already exist(s)"
        raise RefusedError(f"{what}; nothing was written", hint=HINT_FORCE)


def _within(path: Path, root: Path) -> str:
    """A path as evalgate.yml names it: relative to the repository when inside it."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.resolve().as_posix()


def _checkpoint(given: str, root: Path) -> str:
    path = Path(given).absolute()
    if not path.exists():
        from evalgate.scorers.hub_hint import hub_id_hint

        raise RefusedError(
            f"--checkpoint {given}: checkpoint not found",
            hint=hub_id_hint(given)
            or "name the checkpoint's folder (native or Hugging Face) inside this repository",
        )
    if not path.is_dir() and not is_reference_path(path):
        raise RefusedError(
            f"--checkpoint {given}: not a folder",
            hint="name the checkpoint's folder (config.json and the weights), not one of its files, "
            "or a checkpoint reference (checkpoints/current.json, docs/github.md)",
        )
    return _within(path, root)


def _input_file(given: str, flag: str, root: Path) -> str:
    path = Path(given).absolute()
    if not path.is_file():
        raise RefusedError(
            f"{flag} {given}: file not found", hint="check the path (relative to where you run)"
        )
    return _within(path, root)


def _slices(given: str | None, mapping: ImportMap | None, data: bytes, source: str) -> list[str]:
    """--slices, else what the rows give: the mapping's slice columns (mmlu: subject), or the
    dimensions the items in FILE carry."""
    if given is not None:
        dims = [] if given.strip().lower() == "none" else [d.strip() for d in given.split(",")]
    elif mapping is not None:
        dims = [s.dim for s in mapping.slices]
    else:
        records = parse_jsonl(data, source, allow_blank=True)[0]
        dims = [k for _, rec in records if isinstance(rec.get("slices"), dict) for k in rec["slices"]]
    dims = list(dict.fromkeys(dims))
    bad = [d for d in dims if not _DIM.fullmatch(d)]
    if bad:
        raise RefusedError(
            f"slice dimension(s) {', '.join(map(repr, bad))}: a dimension is lower-case letters, digits "
            "and '_', starting with a letter",
            hint="name the dimensions with --slices dim,dim (and map the columns to them with --map "
            "COLUMN=slices.dim), or --slices none",
        )
    return dims


def _installed_from() -> tuple[str | None, str | None]:
    """(OWNER/NAME@SHA, source folder) from pip's direct_url.json: the first when this evalgate was
    installed from a GitHub commit, the second when from a folder (a source checkout)."""
    from importlib import metadata

    # The installed distribution that says where it came from: a source tree on sys.path may
    # carry an egg-info of its own (no direct_url.json), found first but saying nothing.
    try:
        texts = [d.read_text("direct_url.json") for d in metadata.distributions(name="evalgate")]
        doc = json.loads(next((t for t in texts if t), "{}"))
    except (ValueError, OSError):
        return None, None
    if not isinstance(doc, dict):
        return None, None
    url, commit = doc.get("url"), (doc.get("vcs_info") or {}).get("commit_id")
    found = re.fullmatch(r"https://github\.com/([\w.-]+)/([\w.-]+?)(?:\.git)?/?", url or "")
    if found and isinstance(commit, str) and re.fullmatch(r"[0-9a-f]{40}", commit):
        return f"{found[1]}/{found[2]}@{commit}", None
    if "dir_info" in doc and isinstance(url, str) and url.startswith("file://"):
        from urllib.parse import unquote, urlsplit

        return None, unquote(urlsplit(url).path)
    return None, None


def _action(given: str | None) -> tuple[str, str | None]:
    """The release the workflows pin, and a note for the user when it is not the one they run.

    Default: the commit this evalgate was installed from (pip from GitHub), else the release of
    this version (evalgate.release.action_ref: what a pip install of a release runs). Never a
    placeholder: a workflow naming OWNER/evalgate@SHA fails on the first push (docs/github.md)."""
    if given is not None:
        owner, _, ref = given.partition("@")
        # The docs' and older inits' placeholders (OWNER/evalgate@SHA) fit the pattern: refused too.
        placeholder = owner.split("/")[0] == "OWNER" or ref in ("SHA", "REF", "vX.Y.Z", "action-vX.Y.Z")
        if not ACTION.fullmatch(given) or ".." in given or placeholder:
            raise RefusedError(
                f"--action {given!r}: expected OWNER/NAME@REF, the evalgate release the workflows pin",
                hint=f"e.g. --action {release.action_ref()} (the release of this evalgate), or "
                "OWNER/evalgate@<40-hex commit SHA>",
            )
        return given, None
    commit, checkout = _installed_from()
    if commit:
        return commit, None
    ref = release.action_ref()
    if checkout:
        return ref, (
            f"this evalgate is a development install from {checkout}: the workflows pin the release "
            f"of its version, {ref}; pass --action OWNER/evalgate@SHA to pin another"
        )
    return ref, None


def _shards(given: str | None) -> int | None:
    """--shards N: the gate as an Actions matrix of N scoring jobs and a merge (docs/github.md,
    "Sharded gate"); 1 is the single-runner gate."""
    if given is None:
        return None
    try:
        n = int(given)
    except ValueError:
        n = 0
    if not 1 <= n <= MAX_SHARDS or not given.strip().isdigit():
        raise RefusedError(
            f"--shards {given!r}: expected a whole number of runners from 1 to {MAX_SHARDS}",
            hint="e.g. --shards 4: four jobs each score a quarter of the probes, a fifth merges and gates",
        )
    return None if n == 1 else n


def _runner(given: Sequence[str] | None) -> tuple[str, ...] | None:
    """--runner LABEL [LABEL ...]: the runner the jobs that load the model run on (the gate, or
    its shards; the badge; the baseline update's scoring), e.g. a GPU runner's labels
    (docs/github.md, "A GPU runner"); default: GitHub's hosted ubuntu-24.04."""
    labels = [label for g in given or [] for label in g.replace(",", " ").split()]
    if not labels:
        return None
    bad = [label for label in labels if not LABEL_PATTERN.fullmatch(label)]
    if bad:
        raise RefusedError(
            f"--runner {', '.join(map(repr, bad))}: a runner label is letters, digits, '.', '_' and "
            "'-', starting with a letter or digit",
            hint="e.g. --runner gpu-h100 or --runner self-hosted,linux,gpu (a runner carrying every label)",
        )
    return tuple(dict.fromkeys(labels))


def _owners(given: Sequence[str] | None) -> list[str]:
    owners = [o for g in given or [] for o in g.replace(",", " ").split()]
    bad = [o for o in owners if not _OWNER.fullmatch(o)]
    if bad:
        raise RefusedError(
            f"--owners {', '.join(map(repr, bad))}: a code owner is @user, @org/team or an e-mail address",
            hint="e.g. --owners @acme/ml-maintainers (the team that must review a change to the gate)",
        )
    return list(dict.fromkeys(owners))


def codeowners_text(existing: str | None, paths: Sequence[str], owners: Sequence[str]) -> str:
    """CODEOWNERS with init's block for the gate's inputs: `existing` kept line for line, an
    earlier block of init's replaced. Without owners the lines are comments (a path with no owner
    would clear the owners a line above gave it). A gate input whose change nobody reviews is a
    loosened gate once merged (docs/security.md, "What the maintainer must configure")."""
    who = " ".join(owners)
    lines = [
        BLOCK_START,
        '# A change to any of these changes what the gate judges: turn on "Require review from Code',
        '# Owners" for the default branch (branch protection or a ruleset).',
    ]
    if not owners:
        lines.append("# Uncomment them with your maintainers' team (or `evalgate init --owners @org/team`):")
    for path in paths:
        if not _PLAIN_PATH.fullmatch(path.rstrip("/")) or {".", ".."} & set(path.rstrip("/").split("/")):
            lines.append(f"# (not listed: {json.dumps(path)} is not a plain path; add it by hand)")
            continue
        entry = f"/{path}"
        lines.append(f"{entry.ljust(28)} {who}" if owners else f"# {entry.ljust(28)} @ORG/TEAM")
    lines.append(BLOCK_END)
    kept: list[str] = []
    inside = False
    for line in (existing or "").splitlines():
        if line.strip() == BLOCK_START:
            inside = True
        elif inside and line.strip() == BLOCK_END:
            inside = False
        elif not inside:
            kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    return "\n".join([*kept, *([""] if kept else []), *lines]) + "\n"


def gitignore_text(existing: str | None, out: str) -> str | None:
    """.gitignore with the output folder `out` ignored: `existing` kept byte for byte and the line
    appended once, or None when a line already ignores that folder (init run again, or the team's
    own line). Outputs are rewritten on every run; committed, a stale report could be read as
    this run's (docs/security.md, "the output folder")."""
    folder = out.strip("/")
    if out.startswith("/") or not folder or ".." in folder.split("/") or "\n" in folder:
        return None  # outside the repository: nothing of its to ignore
    said = {folder, f"{folder}/", f"/{folder}", f"/{folder}/"}
    if any(line.strip() in said for line in (existing or "").splitlines()):
        return None
    text = existing or ""
    if text and not text.endswith("\n"):
        text += "\n"
    return f"{text}# evalgate's outputs, rewritten on every run (evalgate init)\n/{folder}/\n"


def _gate_inputs(layout: Layout, inputs: Sequence[str]) -> list[str]:
    """The paths CODEOWNERS guards: the configuration, the suite's items and manifest, the
    baselines with their history, the workflows, CODEOWNERS itself, and the training, test and
    template files inside the repository (the checkpoint is what a PR brings to be judged)."""
    local = [p for p in inputs if not Path(p).is_absolute()]
    fixed = [CONFIG_FILENAME, f"evalgate/{layout.name}/", "baselines/", ".github/workflows/", CODEOWNERS]
    return list(dict.fromkeys([*fixed, *local]))


def _yaml(value: str) -> str:
    """A plain path as it is; anything else as a quoted (JSON) string, which YAML reads the same."""
    plain = re.fullmatch(r"[A-Za-z0-9_./-]+", value) and value[0] not in "-." and value != "null"
    return value if plain else json.dumps(value)


def _yaml_list(values: Sequence[str]) -> str:
    return "[" + ", ".join(_yaml(v) for v in values) + "]"


NO_FLOORS = """\
    # A slice fails when it drops by more than the tolerance below the baseline; a floor refuses
    # any accuracy under it, so a collapse fails; it does not pass a drop the test cannot decide
    # (docs/gate.md, "Verdict"), e.g.
    # gate: {tolerance: 0.05, min_accuracy: 0.3}"""
POWER_TITLE = (
    "power: the smallest drop each gated slice detects with power 0.8 (MDE, points; `evalgate power`)"
)


def floors_text(floors: Mapping[str, Mapping[str, Any]], mde_max: float, indent: str = "    ") -> str:
    """The suite's `gate:` block with init's floors (docs/gate.md, "Floors from the first
    baseline"), each slice with why, and the low-power slices that got none said so."""
    written = {k: f for k, f in floors.items() if f["floor"] is not None}
    lines = [
        '# Floors from the first baseline (docs/gate.md, "Floors from the first baseline"): the',
        f"# paired test cannot see a drop of {100 * mde_max:g} points (gate.mde_max) in these slices at the",
        "# disagreement gate.assumed_disagreement assumes, as `evalgate compare` judges them (too few",
        "# items), so each also fails below an absolute floor: the baseline's Wilson",
        "# lower bound minus the tolerance, rounded down to a whole point, never within reach of a model",
        "# that guesses. A floor makes a collapse fail; it does not pass a drop the test cannot decide",
        '# (that stays inconclusive, docs/gate.md "Verdict").',
        "# Raise them, lower them or delete them here as the suite grows (`evalgate power` says what",
        "# each slice can see); in a pull request that is a gate change (docs/approval.md).",
        "gate:",
        "  min_accuracy:",
    ]
    for key, f in floors.items():
        said = f"baseline {f['correct']}/{f['n']} = {100 * f['correct'] / f['n']:.1f}%, {f['why']}"
        if key in written:
            lines.append(f"    {json.dumps(key)}: {f['floor']:.2f}   # {said}")
        else:
            chance = "" if f["chance"] is None else f", chance {100 * f['chance']:.1f}%"
            why = f.get("why_none", "too close to guessing")
            lines.append(f"    # {json.dumps(key)}: none: {why} ({said}{chance})")
    return "\n".join(indent + line for line in lines)


def config_text(
    layout: Layout,
    dims: Sequence[str],
    train: Sequence[str],
    test: str | None,
    checkpoint: str,
    template: str | None = None,
    floors: Mapping[str, Mapping[str, Any]] | None = None,
    mde_max: float = 0.10,
    leaks: Mapping[str, Any] | None = None,
) -> str:
    """evalgate.yml for one multiple-choice suite, commented for the person who reads it next.

    `floors` (slice key -> {"floor", "n", "correct", "chance", "why"}): init's floors for the
    slices the paired test cannot see well, written as the suite's `gate.min_accuracy`. `leaks`:
    the run-wide `leaks:` keys --leak-policy and --leak-window set (none: the block is left out)."""
    suite = suite_text(layout, dims, train, template, floors, mde_max)
    return f"""# The eval gate of this repository, written by `evalgate init` (docs/suites.md, docs/gate.md).
# `evalgate validate` checks the items; `evalgate run` scores the checkpoint and compares every
# slice with the baseline; `evalgate --help` lists the rest.
suites:
{suite}
{_leaks_text(leaks)}
# Held-out text for perplexity (null: none is measured).
test: {_yaml(test) if test else "null"}
# The checkpoint the gate scores: a native or Hugging Face folder of this repository, or a
# checkpoint reference (a .json naming each file's SHA-256; `evalgate fetch` downloads it).
checkpoint: {_yaml(checkpoint)}
# What a pull request is compared with; a maintainer's label `evalgate:update-baseline` rewrites it
# (.github/workflows/update-baseline.yml, docs/approval.md).
baseline: {_yaml(layout.baseline)}
"""


def suite_text(
    layout: Layout,
    dims: Sequence[str],
    train: Sequence[str],
    template: str | None,
    floors: Mapping[str, Mapping[str, Any]] | None,
    mde_max: float,
    test: str | None = None,
) -> str:
    """The suite's entry under `suites:` (two spaces in), commented; `test` is the suite's own
    held-out text (a suite added beside others, docs/suites.md "Perplexity")."""
    name = layout.name
    gate_block = (
        floors_text(floors, mde_max)
        if floors and any(f["floor"] is not None for f in floors.values())
        else NO_FLOORS
    )
    template_line = (
        f"template: {_yaml(template)}"
        if template
        else "# template: prompt.txt     (a file such as: Question: {prompt}<newline>Answer:)"
    )
    train_note = (
        "an item found in them is refused as a leak"
        if train
        else "none given: leak detection is skipped (add files here)"
    )
    test_line = f"\n    # Held-out text for this suite's perplexity.\n    test: {_yaml(test)}" if test else ""
    return f"""  {name}:
    kind: multiple-choice
    # One JSON item per line: {{"id", "prompt", "candidates", "expected", "slices"}}. Add more with
    # `evalgate probes import FILE --suite {name}` (--from mmlu|arc|hellaswag, or --map, for a
    # benchmark's export): they are checked, then sealed with the file.
    probes: [{_yaml(layout.items)}]
    # How an item is shown to the model: {{prompt}} once; a question's candidates follow it
    # after one space (no template: the prompt as it is).
    {template_line}
    # File hashes, version and probe lock: an item's content never changes under its id.
    manifest: {_yaml(layout.manifest)}
    # What every item is sliced by; each value is reported, and gated, on its own.
    slices: {_yaml_list(dims)}
    # Training material ({train_note}).
    train: {_yaml_list(train)}
    # Live items each slice value needs at least.
    coverage: {{min_per_value: 1}}{test_line}
{gate_block}"""


def _leaks_text(leaks: Mapping[str, Any] | None) -> str:
    """The run-wide `leaks:` block init's flags set (docs/validate.md, "Leaks"), or nothing."""
    if not leaks:
        return ""
    keys = ", ".join(f"{k}: {v}" for k, v in leaks.items())
    return (
        '\n# Leak detection against every suite\'s `train:` files (docs/validate.md, "Leaks"): `policy`\n'
        "# refuse (a leak refuses the set) or exclude (leaking items are left out, the rest gated);\n"
        "# `window`: the n-gram detector's length in words.\n"
        f"leaks: {{{keys}}}\n"
    )


def _leak_options(policy: str | None, window: int | None) -> dict[str, Any]:
    """--leak-policy / --leak-window as `leaks:` keys, the window checked against the schema's range
    here, so the refusal names the flag rather than a staged configuration file."""
    if window is not None and not 2 <= window <= 50:
        raise RefusedError(
            f"--leak-window {window}: the n-gram window is 2 to 50 words",
            hint="e.g. --leak-window 8 (longer windows flag only longer shared passages; default 5)",
        )
    return {k: v for k, v in (("policy", policy), ("window", window)) if v is not None}


def _refusal(source: str, imported: ItemImport) -> str:
    lead = "evalgate init: refused; nothing was written"
    bad = imported.bad_rows
    if bad:
        lead += f"\n{len(bad)} of {imported.plan.rows} row(s) of {source} cannot be items of the suite"
    if imported.on_set:
        lead += f"\nthe suite these rows make has {len(imported.on_set)} other problem(s)"
    return lead


# --- a suite added to an existing `suites:` configuration (docs/suites.md) --------------------


def _existing_suites(layout: Layout, force: bool) -> str | None:
    """The text of an evalgate.yml with `suites:` that init adds the suite to; None when there is
    none (or --force: the first-suite path, which replaces it)."""
    if force or layout.config.is_symlink() or not layout.config.is_file():
        return None
    user = read_config_file(layout.config, CONFIG_FILENAME)
    if not isinstance(user.get("suites"), Mapping):
        return None  # a configuration without suites: refused by _refuse_existing, as before
    return layout.config.read_bytes().decode("utf-8")


_TOP_KEY = re.compile(r"[^\s#]")  # a line that starts a top-level key (or ends a block)
_SUITES_LINE = re.compile(r"suites:[ \t]*(#.*)?")


def add_suite_text(text: str, block: str, leaks: Mapping[str, Any] | None) -> str:
    """`text` with the suite's `block` (suite_text's, two spaces in) appended to its `suites:`
    mapping and, when given, a `leaks:` block at the end: every other line and comment is kept.
    The caller checks that the result reads as the original plus these (_check_added)."""
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    start = next((i for i, line in enumerate(lines) if _SUITES_LINE.fullmatch(line.rstrip("\r\n"))), None)
    if start is None:
        raise RefusedError(
            f"{CONFIG_FILENAME}: `suites:` is not written as a block (one suite per indented entry), "
            "so init cannot add a suite to it; nothing was written",
            hint="write `suites:` on a line of its own with each suite indented under it, or add the "
            "suite by hand (docs/suites.md)",
        )
    # the block ends at the next top-level key; its last indented line (an indented comment too:
    # it belongs to the suite above it) is where the new entry goes, before any blank line or
    # column-0 comment that introduces the next key
    last, indent = start, None
    for i in range(start + 1, len(lines)):
        line = lines[i]
        if not line.strip() or line.startswith("#"):
            continue
        if _TOP_KEY.match(line):
            break
        last = i
        if indent is None and not line.lstrip().startswith("#"):
            indent = len(line) - len(line.lstrip(" "))
    shift = " " * (indent or 2)
    body = [shift + line[2:] if line.startswith("  ") else line for line in block.splitlines()]
    out = [*lines[: last + 1], *(line + "\n" for line in body), *lines[last + 1 :]]
    if leaks:
        out.append(_leaks_text(leaks).lstrip("\n"))
    return "".join(out)


def _check_added(old: str, new: str, name: str, leaks: Mapping[str, Any] | None) -> None:
    """The edited text reads as the original with the suite (and `leaks:`) added, and nothing
    else: a text edit that went wrong is our bug, caught before anything is written."""
    from evalgate import safe_yaml

    before, after = safe_yaml.load(old), safe_yaml.load(new)
    expected = dict(before)
    expected["suites"] = {**before["suites"], name: (after.get("suites") or {}).get(name)}
    if leaks:
        expected["leaks"] = dict(leaks)
    if after != expected or expected["suites"][name] is None:
        raise RuntimeError(f"adding suite {name} to {CONFIG_FILENAME} changed other keys")


def _leaks_clash(user: Mapping[str, Any], leaks: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The `leaks:` keys to add: none when evalgate.yml already sets the same values; refused when
    it sets others (run-wide keys: every suite's detection would change with them)."""
    if not leaks:
        return None
    written = user.get("leaks")
    if written is None:
        return leaks
    differ = {k: v for k, v in leaks.items() if not isinstance(written, Mapping) or written.get(k) != v}
    if differ:
        said = ", ".join(f"--leak-{k} {v}" for k, v in differ.items())
        raise RefusedError(
            f"{said}: {CONFIG_FILENAME} already has a `leaks:` block ({written}), which applies to every "
            "suite; nothing was written",
            hint=f"change `leaks:` in {CONFIG_FILENAME} yourself (a gate change for the other suites), or "
            "leave the flag out",
        )
    return None


def _refuse_taken(layout: Layout, cfg: Any) -> None:
    """A suite name already declared, or the new suite's files already there."""
    if any(s.name == layout.name for s in cfg.suites):
        known = ", ".join(s.name for s in cfg.suites)
        raise RefusedError(
            f"--suite {layout.name}: {CONFIG_FILENAME} already declares a suite {layout.name} (suites: "
            f"{known}); nothing was written",
            hint=f"name the new suite differently, or add items to it with `evalgate probes import FILE "
            f"--suite {layout.name}`",
        )
    found = [rel for rel in (layout.items, layout.manifest) if os.path.lexists(layout.root / rel)]
    blocked = [
        parent.as_posix()
        for parent in Path(layout.items).parents[:-1]
        if os.path.lexists(layout.root / parent) and not (layout.root / parent).is_dir()
    ]
    if found or blocked:
        raise RefusedError(
            f"{', '.join(found + blocked)}: already there; init writes the new suite's items and "
            "manifest there; nothing was written",
            hint="move them out of the way, or import into an existing suite with `evalgate probes import`",
        )


def _add_suite(args: argparse.Namespace, console: Console, layout: Layout, original: str) -> int:
    """init into an existing `suites:` configuration: the new suite's block (and leak options)
    added to the text, its items imported and sealed, and one baseline of every suite written to
    the configured baseline (every suite rescored). Staged, then moved into place with
    evalgate.yml last; on any failure the original files are left as they were."""
    root = layout.root
    existing = load_config(layout.config)
    _refuse_taken(layout, existing)
    if existing.baseline is None:
        raise RefusedError(
            f"{CONFIG_FILENAME} sets `baseline: none`; init writes one baseline of every suite; "
            "nothing was written",
            hint="set `baseline: baselines/NAME.json` in evalgate.yml first",
        )
    checkpoint = _checkpoint(args.checkpoint, root)
    if (
        existing.checkpoint is None
        or existing.path(existing.checkpoint).resolve() != (root / checkpoint).resolve()
    ):
        raise RefusedError(
            f"--checkpoint {args.checkpoint}: {CONFIG_FILENAME} scores {existing.checkpoint}; one run "
            "scores every suite with one checkpoint; nothing was written",
            hint=f"pass --checkpoint {existing.checkpoint}, or change `checkpoint:` first",
        )
    data = read_edit_input(args.items)
    mapping = import_mapping(args.from_, args.map)
    dims = _slices(args.slices, mapping, data, args.items)
    train = [_input_file(t, "--train", root) for t in args.train or []]
    test = _input_file(args.test, "--test", root) if args.test else None
    template = _input_file(args.template, "--template", root) if args.template else None
    user = read_config_file(layout.config, CONFIG_FILENAME)
    leaks = _leaks_clash(user, _leak_options(args.leak_policy, args.leak_window))

    def edited(floors: Mapping[str, Mapping[str, Any]] | None, mde_max: float) -> str:
        block = suite_text(layout, dims, train, template, floors, mde_max, test)
        text = add_suite_text(original, block, leaks)
        _check_added(original, text, layout.name, leaks)
        return text

    baseline_path = existing.path(existing.baseline)
    staging = _Staging()
    try:
        staged_config = staging.add(layout.config, edited(None, existing.gate.mde_max).encode("utf-8"))
        cfg = load_config(staged_config)
        view = cfg.for_suite(cfg.suite_named(layout.name))
        done = _import_seal_score(cfg, view, args.items, data, mapping, console)
        if done is None:
            staging.rollback()
            return EXIT_REFUSED
        imported, _, sealed, contents, outcome, _, results = done
        seen, floors = _power(cfg, results, layout, existing.baseline)
        prefix = f"{layout.name}/" if cfg.multi_suite else ""
        own = {k.removeprefix(prefix): f for k, f in floors.items() if k.startswith(prefix)}
        if any(f["floor"] is not None for f in own.values()):
            # only the new suite's floors, written in its own `gate:` (keys without its prefix)
            atomic_write_bytes(staged_config, edited(own, cfg.gate.mde_max).encode("utf-8"))
            cfg = load_config(staged_config)
            results["config"] = cfg.pin()
            results["inputs"] = {**results["inputs"], **config_input(cfg)}
        name = baseline_path.stem
        _, doc = baseline_document(cfg, results, name, commit=None, pr=None)
        for path, new in contents.items():
            staging.add(path, new)
        staging.add(baseline_path, dump_json(doc).encode("utf-8"))
        staging.commit()
    except BaseException:
        staging.rollback()
        raise
    n, suites = len(imported.plan.additions), [s.name for s in cfg.suites]
    print(f"evalgate init: suite {layout.name} added to {CONFIG_FILENAME} in {root}")
    rows = [
        ("edited", CONFIG_FILENAME, f"suite {layout.name} (multiple-choice) added, sliced by "
         + (", ".join(dims) or "nothing") + "; the rest of the file as it was"),
        ("wrote ", layout.items, f"{n} item(s)"),
        ("wrote ", layout.manifest, f"sealed: version {sealed['version']}, {len(sealed['lock'])} ids locked"),
        ("rewrote", existing.baseline, f"one baseline of every suite ({', '.join(suites)}): every suite was "
         "rescored on " + str(results["checkpoint"]["path"])),
    ]  # fmt: skip
    width = max(len(f) for _, f, _ in rows)
    for verb, f, what in rows:
        print(f"  {verb.strip():<7} {f.ljust(width)}  {what}")
    print("  the workflows are kept as they are")
    local = [p for p in [*train, *([test] if test else []), *([template] if template else [])]]
    print("\ncommit them (a pull request that adds a suite is a gate change: docs/approval.md):")
    print(f"  git add {' '.join([CONFIG_FILENAME, f'evalgate/{layout.name}', existing.baseline, *local])}")
    if imported.plan.twins:
        print(
            f"  warning: {len(imported.plan.twins)} twin item(s) in {args.items}; "
            "`evalgate validate` lists them"
        )
    _say_excluded(outcome.excluded)
    _say_power(seen, own)
    return EXIT_PASS


def main(args: argparse.Namespace, console: Console) -> int:
    root = Path.cwd()
    layout = Layout(root, _suite_name(args.suite))
    shards = _shards(getattr(args, "shards", None))
    runner = _runner(getattr(args, "runner", None))
    original = _existing_suites(layout, args.force)
    if original is not None:
        if shards is not None or runner is not None:
            raise RefusedError(
                f"--shards/--runner: {CONFIG_FILENAME} already has suites; adding a suite leaves the "
                "workflows as they are",
                hint="add the suite without --shards; to have the sharded gate written, run init "
                'again with --force --shards N (or see docs/github.md, "Sharded gate")',
            )
        return _add_suite(args, console, layout, original)
    _refuse_existing(layout, args.force)
    checkpoint = _checkpoint(args.checkpoint, root)
    data = read_edit_input(args.items)
    mapping = import_mapping(args.from_, args.map)
    dims = _slices(args.slices, mapping, data, args.items)
    train = [_input_file(t, "--train", root) for t in args.train or []]
    test = _input_file(args.test, "--test", root) if args.test else None
    template = _input_file(args.template, "--template", root) if args.template else None
    action, action_note = _action(args.action)
    owners = _owners(getattr(args, "owners", None))
    leaks = _leak_options(args.leak_policy, args.leak_window)
    text = config_text(layout, dims, train, test, checkpoint, template, leaks=leaks)

    staging = _Staging()
    try:
        # The configuration is read from its staged copy: paths resolve from this folder.
        staged_config = staging.add(layout.config, text.encode("utf-8"))
        cfg = load_config(staged_config)
        view = cfg.for_suite(cfg.suites[0])
        done = _import_seal_score(cfg, view, args.items, data, mapping, console)
        if done is None:
            staging.rollback()
            return EXIT_REFUSED
        imported, previous, sealed, contents, outcome, scored_on, results = done
        seen, floors = _power(cfg, results, layout)
        if any(f["floor"] is not None for f in floors.values()):
            # The floors go into evalgate.yml, and the baseline pins the configuration it was
            # made with: pinned again from the final text, so the first run is no gate change.
            text = config_text(
                layout, dims, train, test, checkpoint, template, floors, cfg.gate.mde_max, leaks
            )
            atomic_write_bytes(staged_config, text.encode("utf-8"))
            cfg = load_config(staged_config)
            results["config"] = cfg.pin()
            results["inputs"] = {**results["inputs"], **config_input(cfg)}
        target, doc = baseline_document(cfg, results, layout.name, commit=None, pr=None)
        for path, new in contents.items():
            staging.add(path, new)
        staging.add(target, dump_json(doc).encode("utf-8"))
        written = {
            "eval-gate.yml": gate_workflow(action, runner)
            if shards is None
            else sharded_gate_workflow(action, shards, runner),
            "eval-gate-comment.yml": comment_workflow(action),
            "badge.yml": badge_workflow(action, runner),
            "update-baseline.yml": update_baseline_workflow(action, layout.name),
            "update-baseline-apply.yml": update_baseline_apply_workflow(action, layout.name, runner),
            "void-labels.yml": void_labels_workflow(action),
        }
        for name, workflow in written.items():
            staging.add(root / ".github" / "workflows" / name, workflow.encode("utf-8"))
        existing = layout.codeowners.read_text("utf-8") if layout.codeowners.is_file() else None
        guarded = _gate_inputs(layout, [*train, *([test] if test else []), *([template] if template else [])])
        staging.add(layout.codeowners, codeowners_text(existing, guarded, owners).encode("utf-8"))
        ignored = gitignore_text(
            layout.gitignore.read_text("utf-8") if layout.gitignore.is_file() else None, cfg.out
        )
        if ignored is not None:
            staging.add(layout.gitignore, ignored.encode("utf-8"))
        staging.commit()
    except BaseException:
        staging.rollback()
        raise
    inputs = [checkpoint, *train, *([test] if test else []), *([template] if template else [])]
    _say_done(
        layout, dims, imported, sealed, previous, results, action, inputs, action_note, owners,
        ignored=cfg.out if ignored is not None else None,
    )  # fmt: skip
    if imported.plan.twins:
        twins = imported.plan.twins
        print(
            f"  warning: {len(twins)} item(s) of {args.items} repeat another item's prompt and candidates "
            "(twins; `evalgate validate` lists them; deprecate one of each pair or make them differ):"
        )
        print("\n".join(f"    {args.items}:{w.line}: {w.probe_id}: {w.message}" for w in twins))
    _say_excluded(outcome.excluded)
    # what validate and run warn of: a slice value whose every item is left out drops out of the gate
    for w in scored_on.warnings:
        if w.check == "slice-empty":
            print(f"  warning: {w.message} [slice-empty]" + (f"\n    hint: {w.hint}" if w.hint else ""))
    _say_power(seen, floors)
    return EXIT_PASS


class _Scored(NamedTuple):
    """A suite's items imported, sealed and scored on the staged set (`_import_seal_score`)."""

    imported: ItemImport
    previous: dict | None  # the manifest before this seal
    sealed: dict
    contents: dict[str, bytes]  # the staged files, the sealed manifest among them
    outcome: Any  # the set's validation (what leaks excluded)
    scored_on: Any  # what the baseline is scored on (its warnings)
    results: dict[str, Any]


def _import_seal_score(
    cfg: Any, view: Any, items: str, data: bytes, mapping: ImportMap | None, console: Console
) -> _Scored | None:
    """Import the suite's items, seal them and score the checkpoint on the staged set, for a new
    gate and for a suite added to one; None when the rows were refused (said on the console).
    init takes the team's set as it is: twins are accepted, and listed when it is done."""
    imported = import_items(view, items, data, mapping, allow_twins=True)
    if imported.problems or imported.on_set:
        console.refusal(_refusal(items, imported), imported.problems + imported.on_set)
        return None
    outcome = imported.checked.outcome if imported.checked else validate(view)
    if not outcome.probes:
        raise RefusedError(f"{items} holds no items; nothing was written")
    manifest, previous, sealed = sealed_manifest(view, outcome, None, "patch")
    contents = {**imported.staged.contents, manifest: dump_json(sealed).encode("utf-8")}
    progress = console.progress()
    try:
        scored_on = baseline_outcome(cfg, progress, contents=contents)
    except RefusedError as exc:
        from evalgate.report.findings import render_findings

        print(render_findings(list(exc.findings), "text"))
        raise
    results = score(cfg, scored_on, progress, scorer_factory=scorer_factory())
    return _Scored(imported, previous, sealed, contents, outcome, scored_on, results)


def _power(
    cfg: Any, results: dict[str, Any], layout: Layout, baseline: str | None = None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """What the first baseline's slices can see (gate/power.py, at the typical rates), and the
    floors init writes for those that cannot see a drop of gate.mde_max (docs/gate.md).
    `baseline`: where that baseline goes when it is not the layout's (a suite added)."""
    entries = results["probes"]
    counts = power.slice_counts(entries, cfg.gate, {e["id"]: e for e in entries})
    seen = power.power_table(
        counts,
        cfg.gate,
        reference=f"the first baseline {baseline or layout.baseline}",
        needed=False,
        perplexities=perplexity_checks(cfg),
    )
    floors = power.floors(seen, counts, cfg.gate.z)
    by_key = {r["slice"]: r for r in seen["slices"]}
    for key, f in floors.items():
        f["why"] = _why_low(by_key[key], seen["reference_disagreement"])
        if f["floor"] is None:
            f["why_none"] = _why_no_floor(f, cfg.gate.z)
    return seen, floors


def _why_no_floor(f: Mapping[str, Any], z: float) -> str:
    """Why init writes no floor for a low-power slice: the baseline itself within a guesser's
    reach, or (issue 25: 5/5 = 100% was called "too near guessing") a slice too small for any
    floor under its baseline to lie beyond that reach (`power.suggested_floor`)."""
    n, correct, chance = f["n"], f["correct"], f["chance"]
    if chance is None:
        return "the baseline's Wilson lower bound minus the tolerance is at 0"
    reach = power.guess_ceiling(chance, n, z)
    if correct / n <= reach:
        return (
            f"the baseline is too near guessing ({100 * reach:.1f}% is within a guesser's reach on {n} items)"
        )
    return (
        f"too few items: on {n} items a guesser reaches {100 * reach:.1f}%, above any floor the baseline's "
        "Wilson lower bound allows; add items"
    )


def _why_low(row: Mapping[str, Any], disagreement: float | None) -> str:
    """The gate's own figure (gate/power.py, `judge`): the MDE compare gives this slice."""
    if not row["gated"]:
        return f"not gated ({row['not_gated']})"
    if row["mde"] is None:
        return "no drop it can have is seen with power 0.8"
    at = "" if disagreement is None else f" at {100 * disagreement:g}% disagreement"
    return f"the smallest drop it detects is {100 * row['mde']:.1f} points{at}"


def _say_excluded(excluded: frozenset[str]) -> None:
    """Items left out as leaks under --leak-policy exclude: scored by no baseline, so said here."""
    if excluded:
        ids = sorted(excluded)
        shown = ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
        print(
            f"\nleaks: {len(ids)} leaking item(s) left out of the gated series (leaks.policy: exclude): "
            f"{shown}; `evalgate validate` names the training line of each"
        )


def _say_power(seen: Mapping[str, Any], floors: Mapping[str, Mapping[str, Any]]) -> None:
    from evalgate.report.power import power_text

    title = (
        "\npower: the smallest drop each gated slice detects with power 0.8 (MDE, points; `evalgate power`)"
    )
    print(power_text(seen, short=True, title=title))
    written = {k: f["floor"] for k, f in floors.items() if f["floor"] is not None}
    if written:
        listed = ", ".join(f"{k} {v:.2f}" for k, v in written.items())
        print(
            f"  floors: evalgate.yml sets gate.min_accuracy for {len(written)} slice(s) too small to see a "
            f"drop of {100 * seen['mde_max']:g} points: {listed} (the baseline's Wilson lower bound minus "
            'the tolerance; docs/gate.md, "Floors from the first baseline"); change them there'
        )
    for key, f in floors.items():
        if f["floor"] is None:
            print(f"  no floor for {key}: {f.get('why_none', 'the baseline is too near guessing there')}")


def _say_done(
    layout: Layout,
    dims: Sequence[str],
    imported: ItemImport,
    sealed: dict,
    previous: dict | None,
    results: dict,
    action: str,
    inputs: list[str],
    action_note: str | None = None,
    owners: Sequence[str] = (),
    ignored: str | None = None,
) -> None:
    n, name = len(imported.plan.additions), layout.name
    acc = ((results.get("slices") or {}).get("overall") or {}).get("accuracy")
    shown = f"{acc:.1%}" if isinstance(acc, float) else "n/a"
    seal = (
        f"version {sealed['version']}" + (" (first seal)" if previous is None else "")
        + f", {len(sealed['lock'])} ids locked"
    )  # fmt: skip
    skipped = f"; {len(imported.plan.skipped)} already there" if imported.plan.skipped else ""
    kept = "kept " if not n else "wrote"
    rows = [
        ("wrote", CONFIG_FILENAME, f"the configuration: suite {name} (multiple-choice), sliced by "
         + (", ".join(dims) or "nothing")),
        (kept, layout.items, f"{n} item(s) added{skipped}"),
        ("wrote", layout.manifest, f"sealed: {seal}"),
        ("wrote", layout.baseline,
         f"the first baseline: overall accuracy {shown} on {results['checkpoint']['path']}"),
        *(("wrote", f".github/workflows/{wf}", what) for wf, what in WORKFLOWS.items()),
        ("wrote", CODEOWNERS, "code owners review every change to the gate's inputs"
         + ("" if owners else " (commented out: give --owners)")),
        *((("wrote", GITIGNORE, f"ignores the output folder /{ignored.strip('/')}/"),) if ignored else ()),
    ]  # fmt: skip
    width = max(len(f) for _, f, _ in rows)
    print(f"evalgate init: the gate is set up in {layout.root}")
    for verb, f, what in rows:
        print(f"  {verb} {f.ljust(width)}  {what}")
    local = [p for p in inputs if not Path(p).is_absolute()]
    print("\ncommit them (with the checkpoint and the training files, if they are not committed yet):")
    paths = [CONFIG_FILENAME, f"evalgate/{name}", layout.baseline, *layout.workflows, CODEOWNERS]
    paths += [*([GITIGNORE] if ignored else []), *local]
    print(f"  git add {' '.join(paths)}")
    print(f'  git commit -m "evalgate: gate the checkpoint on suite {name}"')
    outside = [p for p in inputs if Path(p).is_absolute()]
    if outside:
        print(
            f"  note: {', '.join(outside)} lie(s) outside this folder; CI reads only the repository: "
            "move them in and change evalgate.yml"
        )
    print("\nnext:")
    print("  evalgate validate      # the items: schema, leaks, coverage, seal")
    print(f"  evalgate run           # scores the checkpoint and compares it with {layout.baseline}")
    print(f"  evalgate probes import FILE --suite {name} [--from mmlu|arc|hellaswag]   # more items")
    print("  push to the default branch, then make the job `gate` (eval-gate.yml) a required check")
    print(f"  the workflows run the evalgate action {action}")
    if action_note:
        print(f"  note: {action_note}")
    if not re.fullmatch(r"[0-9a-f]{40}", action.partition("@")[2]):
        # zizmor's unpinned-uses flags a tag pin (docs/github.md, "Linting the workflows").
        print(
            f"  pinned by tag: zizmor asks for a commit SHA; pin the commit of {action.partition('@')[2]} "
            "(its release notes) with --action, or commit the .github/zizmor.yml of docs/github.md "
            '("Linting the workflows"), which allows evalgate\'s release tag'
        )
    if not owners:
        print(
            f"  name the gate's code owners in {CODEOWNERS} (its evalgate lines are commented out), "
            "or run init again with --owners @org/team --force"
        )
