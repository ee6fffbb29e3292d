"""`evalgate init --suite NAME --items FILE [--from mmlu|arc|hellaswag] [--map MAPPING] --checkpoint DIR
[--train FILE ...] [--test FILE] [--slices DIM,DIM] [--leak-policy refuse|exclude] [--leak-window N]
[--action OWNER/evalgate@REF] [--force]`.

Sets up the gate in the current folder (the repository's root), from one multiple-choice suite:

    evalgate.yml                              the configuration: the suite, `test: null` (or --test),
                                              the checkpoint, `baseline: baselines/NAME.json`
    evalgate/NAME/items.jsonl                 the items, imported as `probes import` imports them
    evalgate/NAME/MANIFEST.json               sealed (version, file hashes, probe lock)
    baselines/NAME.json                       the first baseline, made as `baseline update` makes it
    .github/workflows/eval-gate.yml           the gate on every pull request
    .github/workflows/update-baseline.yml     the labelled baseline update: the label's request,
    .github/workflows/update-baseline-apply.yml   the update it starts (workflow_run), and
    .github/workflows/void-labels.yml         the labels' removal on a push (docs/approval.md)

All or nothing: everything is checked, imported, sealed and scored before any file is written.
Every file is then staged beside its target (`.NAME.evalgate-init`) and moved into place,
evalgate.yml last; a failure removes what was staged. The import is probeset_io.import_items
(shared with `probes import --suite`), the baseline pipeline.py's (shared with `baseline update`).
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
from typing import Any

from evalgate import release
from evalgate.config import CONFIG_FILENAME, load_config
from evalgate.console import Console
from evalgate.edges.files import atomic_write_bytes, dump_json
from evalgate.errors import EXIT_PASS, EXIT_REFUSED, RefusedError
from evalgate.gate import power
from evalgate.gate.power import REFERENCE_DISAGREEMENT
from evalgate.github.workflows import (
    ACTION,
    gate_workflow,
    update_baseline_apply_workflow,
    update_baseline_workflow,
    void_labels_workflow,
)
from evalgate.pipeline import baseline_document, baseline_outcome, score
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
    def workflows(self) -> tuple[str, str, str, str]:
        return (
            ".github/workflows/eval-gate.yml",
            ".github/workflows/update-baseline.yml",
            ".github/workflows/update-baseline-apply.yml",
            ".github/workflows/void-labels.yml",
        )

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
        from evalgate.scorers.loaders import hub_id_hint  # torch: only when a checkpoint is missing

        raise RefusedError(
            f"--checkpoint {given}: checkpoint not found",
            hint=hub_id_hint(given)
            or "name the checkpoint's folder (native or Hugging Face) inside this repository",
        )
    if not path.is_dir():
        raise RefusedError(
            f"--checkpoint {given}: not a folder",
            hint="name the checkpoint's folder (config.json and the weights), not one of its files",
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

    try:
        text = metadata.distribution("evalgate").read_text("direct_url.json")
        doc = json.loads(text or "{}")
    except (metadata.PackageNotFoundError, ValueError, OSError):
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
        f"# paired test cannot see a drop of {100 * mde_max:g} points (gate.mde_max) at "
        f"{100 * REFERENCE_DISAGREEMENT:g}% disagreement in these",
        "# slices (too few items), so each also fails below an absolute floor: the baseline's Wilson",
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
    return f"""# The eval gate of this repository, written by `evalgate init` (docs/suites.md, docs/gate.md).
# `evalgate validate` checks the items; `evalgate run` scores the checkpoint and compares every
# slice with the baseline; `evalgate --help` lists the rest.
suites:
  {name}:
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
    coverage: {{min_per_value: 1}}
{gate_block}
{_leaks_text(leaks)}
# Held-out text for perplexity (null: none is measured).
test: {_yaml(test) if test else "null"}
# The checkpoint the gate scores: a native or Hugging Face folder of this repository.
checkpoint: {_yaml(checkpoint)}
# What a pull request is compared with; a maintainer's label `evalgate:update-baseline` rewrites it
# (.github/workflows/update-baseline.yml, docs/approval.md).
baseline: {_yaml(layout.baseline)}
"""


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


def main(args: argparse.Namespace, console: Console) -> int:
    root = Path.cwd()
    layout = Layout(root, _suite_name(args.suite))
    _refuse_existing(layout, args.force)
    checkpoint = _checkpoint(args.checkpoint, root)
    data = read_edit_input(args.items)
    mapping = import_mapping(args.from_, args.map)
    dims = _slices(args.slices, mapping, data, args.items)
    train = [_input_file(t, "--train", root) for t in args.train or []]
    test = _input_file(args.test, "--test", root) if args.test else None
    template = _input_file(args.template, "--template", root) if args.template else None
    action, action_note = _action(args.action)
    leaks = _leak_options(args.leak_policy, args.leak_window)
    text = config_text(layout, dims, train, test, checkpoint, template, leaks=leaks)

    staging = _Staging()
    try:
        # The configuration is read from its staged copy: paths resolve from this folder.
        staged_config = staging.add(layout.config, text.encode("utf-8"))
        cfg = load_config(staged_config)
        view = cfg.for_suite(cfg.suites[0])
        # init takes the team's set as it is: twins are accepted, and listed when it is done
        imported = import_items(view, args.items, data, mapping, allow_twins=True)
        if imported.problems or imported.on_set:
            console.refusal(_refusal(args.items, imported), imported.problems + imported.on_set)
            staging.rollback()
            return EXIT_REFUSED
        outcome = imported.checked.outcome if imported.checked else validate(view)
        if not outcome.probes:
            raise RefusedError(f"{args.items} holds no items; nothing was written")
        manifest, previous, sealed = sealed_manifest(view, outcome, None, "patch")
        contents = {**imported.staged.contents, manifest: dump_json(sealed).encode("utf-8")}
        progress = console.progress()
        try:
            scored_on = baseline_outcome(cfg, progress, contents=contents)
        except RefusedError as exc:
            from evalgate.report.findings import render_findings

            print(render_findings(list(exc.findings), "text"))
            raise
        results = score(cfg, scored_on, progress)
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
        gate, update, apply, void = layout.workflows
        staging.add(root / gate, gate_workflow(action).encode("utf-8"))
        staging.add(root / update, update_baseline_workflow(action, layout.name).encode("utf-8"))
        staging.add(root / apply, update_baseline_apply_workflow(action, layout.name).encode("utf-8"))
        staging.add(root / void, void_labels_workflow(action).encode("utf-8"))
        staging.commit()
    except BaseException:
        staging.rollback()
        raise
    inputs = [checkpoint, *train, *([test] if test else []), *([template] if template else [])]
    _say_done(layout, dims, imported, sealed, previous, results, action, inputs, action_note)
    if imported.plan.twins:
        twins = imported.plan.twins
        print(
            f"  warning: {len(twins)} item(s) of {args.items} repeat another item's prompt and candidates "
            "(twins; `evalgate validate` lists them; deprecate one of each pair or make them differ):"
        )
        print("\n".join(f"    {args.items}:{w.line}: {w.probe_id}: {w.message}" for w in twins))
    _say_excluded(outcome.excluded)
    _say_power(seen, floors)
    return EXIT_PASS


def _power(cfg: Any, results: dict[str, Any], layout: Layout) -> tuple[dict[str, Any], dict[str, Any]]:
    """What the first baseline's slices can see (gate/power.py, at the typical rates), and the
    floors init writes for those that cannot see a drop of gate.mde_max (docs/gate.md)."""
    entries = results["probes"]
    counts = power.slice_counts(entries, cfg.gate, {e["id"]: e for e in entries})
    seen = power.power_table(
        counts, cfg.gate, reference=f"the first baseline {layout.baseline}", needed=False
    )
    floors = power.floors(seen, counts, cfg.gate.z)
    by_key = {r["slice"]: r for r in seen["slices"]}
    for key, f in floors.items():
        f["why"] = _why_low(by_key[key])
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


def _why_low(row: Mapping[str, Any]) -> str:
    if not row["gated"]:
        return f"not gated ({row['not_gated']})"
    at = min(row["at"], key=lambda x: abs(x["disagreement"] - REFERENCE_DISAGREEMENT))
    if at["mde"] is None:
        return "no drop it can have is seen with power 0.8"
    return f"the smallest drop it detects is {100 * at['mde']:.1f} points"


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
) -> None:
    n, name = len(imported.plan.additions), layout.name
    acc = ((results.get("slices") or {}).get("overall") or {}).get("accuracy")
    shown = f"{acc:.1%}" if isinstance(acc, float) else "n/a"
    seal = (
        f"version {sealed['version']}" + (" (first seal)" if previous is None else "")
        + f", {len(sealed['lock'])} ids locked"
    )  # fmt: skip
    skipped = f"; {len(imported.plan.skipped)} already there" if imported.plan.skipped else ""
    gate, update, apply, void = layout.workflows
    kept = "kept " if not n else "wrote"
    rows = [
        ("wrote", CONFIG_FILENAME, f"the configuration: suite {name} (multiple-choice), sliced by "
         + (", ".join(dims) or "nothing")),
        (kept, layout.items, f"{n} item(s) added{skipped}"),
        ("wrote", layout.manifest, f"sealed: {seal}"),
        ("wrote", layout.baseline,
         f"the first baseline: overall accuracy {shown} on {results['checkpoint']['path']}"),
        ("wrote", gate, "the gate on every pull request"),
        ("wrote", update, "the label evalgate:update-baseline asks for a new baseline"),
        ("wrote", apply, "then the baseline is rewritten (environment baseline-push)"),
        ("wrote", void, "a push removes the approval labels"),
    ]  # fmt: skip
    width = max(len(f) for _, f, _ in rows)
    print(f"evalgate init: the gate is set up in {layout.root}")
    for verb, f, what in rows:
        print(f"  {verb} {f.ljust(width)}  {what}")
    local = [p for p in inputs if not Path(p).is_absolute()]
    print("\ncommit them (with the checkpoint and the training files, if they are not committed yet):")
    paths = [CONFIG_FILENAME, f"evalgate/{name}", layout.baseline, *layout.workflows, *local]
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
    print("  push to the default branch, then make eval-gate a required check (docs/security.md)")
    print(f"  the workflows run the evalgate action {action}")
    if action_note:
        print(f"  note: {action_note}")
