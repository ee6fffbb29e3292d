"""What a pull request changes that the gate reads: the eval-gate workflow's first decision.

    python -P -m evalgate.github.pr_scope --base SHA [--head REF]

Run by .github/workflows/eval-gate.yml with the BASE branch's installed evalgate (never the PR's
code; docs/security.md). The workflow has no `paths:` filter, because a required check skipped by a
path filter stays pending and blocks the merge: this module says whether anything the gate reads
changed, so the job can report success quickly when nothing did.

A change to a file that decides what a checkout writes (`.gitattributes` in any folder,
`.lfsconfig`, `.gitmodules`) makes the PR relevant too: the gate reads checked-out bytes, which
such a file rewrites without changing a blob (CHECKOUT_FILES). So does a file of the update
journal (`.evalgate-journal.json`, `.NAME.evalgate-new`) in any folder: the gate refuses a folder
holding one, so merged unscored it would refuse every later run (journal_files).

What the gate reads is resolved, not spelled (github/git_tree.py): every path of the base's and
the PR's evalgate.yml (and the fixed folders, and the package a `loader:` imports) is followed
through each tree, the base's, the merge base's and the PR's, symbolic links included, and a link
and its target are both gate inputs; so are the links inside an input folder. A path that cannot
be resolved (a link out of the repository, a cycle) makes the PR relevant: "not relevant" is said
only of what was seen in full.

Prints GITHUB_OUTPUT lines and exits 0:

    relevant=true|false
    gate-paths=P P ...    every resolved gate input but the checkpoint (plain names only, `_PLAIN`),
                          for the report's "changes the gate itself" diff
    base-inputs=P P ...   evalgate.yml and the baseline the BASE configuration names, and the
                          baseline's history and anchor (baselines/history/NAME.jsonl,
                          NAME.anchor.json), resolved in the base tree (a link and its target both):
                          what the workflow restores from the base commit before the gate runs
    checkout-changed=P P ...  the checkout files (CHECKOUT_FILES) the PR changes: a gate change of
                          kind base_input (`--base-inputs-changed`), refused unless a maintainer
                          approved this head; a character outside `[A-Za-z0-9._/-]` shown as `_`

    checkpoint-paths=P P ...  the checkpoint's resolved paths that are no other input: what the PR
                          brings to be judged, scored and never shown as a change of the gate

Exits 2 with the bootstrap steps when the base branch has no evalgate.yml or no baseline yet (the
first PR adding evalgate is never gated against the bundled demo), and 2 when the base's inputs
cannot be named for that restore (a link out of the repository, a name that is not plain).
"""

from __future__ import annotations

import argparse
import posixpath
import re
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from evalgate import release
from evalgate.config import CONFIG_FILENAME, default_config_dict, parse_config_text
from evalgate.edges.journal import JOURNAL, STAGED_SUFFIX
from evalgate.errors import EXIT_REFUSED, ConfigError
from evalgate.gate.history import history_paths
from evalgate.github.git_tree import GitTree, Resolved, TreeError, git
from evalgate.schemas import loader_spec

# Paths end up in GITHUB_OUTPUT and on a git command line: plain names only (no newline, no
# pathspec magic such as `:(exclude)`, no option such as `--output=`, no leading dot).
_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._/-]*")
# Always part of the gate's yardstick (issue 10, "gate-changes"), wherever evalgate.yml points.
FIXED_PATHS = (CONFIG_FILENAME, "baselines")
# The bundled verb-forms set's folders: part of the yardstick of a configuration that reads that
# layout (no `suites:`: its top-level probes, grammar and corpus keys are read, the embedded default
# filling in what it leaves out). A team's `suites:` configuration reads only what it names.
DEMO_PATHS = ("data/eval", "data/corpus", "data/grammar")
# With `suites:`, these top-level keys are not read (config.py, docs/suites.md): the embedded
# default's values for them name no file of such a configuration.
SUITE_ONLY_KEYS = ("probes", "template", "manifest", "grammar", "train")
# Files that change the BYTES a checkout writes without changing a blob the gate reads: the scope
# compares git objects, the gate reads checked-out files. `.gitattributes` (in any folder: eol,
# text, working-tree-encoding, ident, filters such as Git LFS), `.lfsconfig` (where LFS objects
# come from) and `.gitmodules` (what a submodule path holds). A PR that changes one is scored, so
# the gate reads what every later checkout will write (docs/security.md). Matched by name in any
# folder, case ignored (a case-insensitive checkout reads `.GitAttributes` too).
CHECKOUT_FILES = (".gitattributes", ".lfsconfig", ".gitmodules")
# The configuration keys that name files the gate reads.
PATH_KEYS = ("probes", "template", "manifest", "grammar", "train", "test", "checkpoint", "baseline")
# What each entry of `suites:` names for itself (docs/suites.md); gathered under SUITE_PATHS.
SUITE_PATH_KEYS = ("probes", "template", "manifest", "grammar", "train", "test")
SUITE_PATHS = "suite_paths"
CONFIG_BYTES = 1 << 20  # an evalgate.yml is a few KB; a bigger one is not read here
MAX_RESOLVED = 20_000  # paths resolved per tree, links inside input folders included

BOOTSTRAP = """evalgate: refused: no baseline on the base branch yet ({why}).
The gate judges a pull request against the base branch's evalgate.yml and baseline, never against
the bundled demo, and never against what the pull request brings itself: until the base branch has
them, nothing is gated (exit 2; expected for the pull request that sets the gate up)."""
BOOTSTRAP_ADDED = """This pull request adds them ({config}, {baseline}: what `evalgate init` writes). Next:
  1. a maintainer reviews those files, the suite's items, .github/workflows/ and .github/CODEOWNERS,
     and merges this pull request (the check is not required yet: this refusal is expected for it);
  2. make the job `gate` (eval-gate.yml) a required status check of the default branch;
  3. every later pull request is gated against {baseline}; a regression you accept is approved
     with the label evalgate:update-baseline, which rewrites it (docs/approval.md).
Docs: {docs}"""
BOOTSTRAP_STEPS = """To set up the gate, on a branch of the default branch ({base}):
  1. pip install "evalgate @ git+https://github.com/{repository}@{tag}"   (the release you pin)
  2. at the repository's root: evalgate init --suite NAME --items FILE --checkpoint DIR
     (it writes evalgate.yml, the sealed items, the first baseline baselines/NAME.json, the
     workflows and .github/CODEOWNERS); with an evalgate.yml already there, run
     evalgate baseline update --checkpoint DIR --name NAME     (writes baselines/NAME.json);
  3. commit what it wrote and merge that pull request (this refusal is expected for it);
  4. make the job `gate` (eval-gate.yml) a required status check of the default branch.
Later pull requests are then gated against that baseline. Docs: {docs}"""


def bootstrap_text(why: str, base_rev: str, head: GitTree) -> str:
    """The refusal of a pull request into a branch without a gate, with the next step: the one a
    pull request that brings the configuration and its baseline (init's) needs, or how to set up."""
    try:
        head_cfg = config_at(head)
    except ConfigError:
        head_cfg = None
    baseline = (head_cfg or {}).get("baseline")
    brought = (
        head_cfg is not None
        and isinstance(baseline, str)
        and baseline.lower() != "none"
        and bootstrap_reason(head, head_cfg) is None
    )
    docs = release.docs_url("docs/github.md")
    if brought:
        nxt = BOOTSTRAP_ADDED.format(config=CONFIG_FILENAME, baseline=baseline, docs=docs)
    else:
        nxt = BOOTSTRAP_STEPS.format(
            base=base_rev, repository=release.REPOSITORY, tag=release.tag(), docs=docs
        )
    return BOOTSTRAP.format(why=why) + "\n" + nxt


class Refused(Exception):
    """The decision cannot be made safely: exit 2 with this message."""


def config_at(tree: GitTree) -> dict[str, Any] | None:
    """evalgate.yml in `tree` (followed through its links), merged over the embedded default; None
    when absent or unresolvable. ConfigError when it is there but is no configuration."""
    where = tree.resolve(CONFIG_FILENAME)
    if where.problem or not tree.is_file(where.path):
        return None
    data = tree.read(where.path, CONFIG_BYTES)
    if data is None:
        raise ConfigError(f"{CONFIG_FILENAME} at {tree.rev}: larger than {CONFIG_BYTES:,} bytes")
    user = parse_config_text(data.decode("utf-8", errors="replace"), f"{CONFIG_FILENAME} at {tree.rev}")
    out = default_config_dict()
    if user.get("suites"):
        for key in SUITE_ONLY_KEYS:
            out.pop(key, None)
    out.update({k: v for k, v in user.items() if k in (*PATH_KEYS, "loader") and v is not None})
    # `test: null` (what init writes) measures no perplexity and reads no file, as load_config
    # reads it; any other null keeps the default's paths (more paths: the safe side).
    if "test" in user and user["test"] is None:
        out["test"] = None
    out[SUITE_PATHS] = suite_paths(user.get("suites"))
    return out


def suite_paths(suites: Any) -> list[str]:
    """The files the suites of a configuration name, with each default manifest (MANIFEST.json
    beside the suite's first probe file, as spelled: docs/suites.md)."""
    out: list[str] = []
    for suite in suites.values() if isinstance(suites, dict) else ():
        if not isinstance(suite, dict):
            continue
        for key in SUITE_PATH_KEYS:
            value = suite.get(key)
            out += [v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str)]
        probes = suite.get("probes")
        first = probes[0] if isinstance(probes, list) and probes else probes
        if "manifest" not in suite and isinstance(first, str):
            out.append(posixpath.join(posixpath.dirname(first), "MANIFEST.json"))
    return out


def spellings(value: str) -> set[str]:
    """A configured path as the gate may read it: as written, and with backslashes as folders
    (a configuration written on Windows); both are resolved, so neither hides the other."""
    return {value, value.strip(), value.strip().replace("\\", "/")} - {""}


def spelled_paths(configs: Iterable[dict[str, Any] | None]) -> set[str]:
    """Every path the gate reads under any of these configurations, as written."""
    out = set(FIXED_PATHS)
    for cfg in configs:
        if cfg is None or not cfg.get(SUITE_PATHS):
            out |= set(DEMO_PATHS)  # the verb-forms layout (or no configuration: the default's)
        for key in (*PATH_KEYS, SUITE_PATHS):
            value = (cfg or {}).get(key)
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, str) and item.lower() != "none":
                    out |= spellings(item)
                    if key == "baseline":  # its history and anchor (gate/history.py)
                        out |= {p for spelled in spellings(item) for p in history_paths(spelled)}
        package = loader_package(cfg)
        if package:
            out |= {package, f"{package}.py"}
    return out


def loader_package(cfg: dict[str, Any] | None) -> str | None:
    """The top-level package a `loader: pkg.module:function` imports from the repository's root
    (scorers/plugin_loader.py puts the root first on sys.path): its code loads the model."""
    spec = (cfg or {}).get("loader")
    if not isinstance(spec, str) or not loader_spec().match(spec):
        return None
    return spec.split(":")[0].split(".")[0]


def loader_files(package: str, names: Iterable[str]) -> list[str]:
    """The files Python could import `package` from, besides `package/` and `package.py`: any
    top-level `package.*` (a .pyc, an extension module) and `__pycache__/package.*` (an unchecked
    hash-based .pyc is loaded without looking at its source)."""
    return [n for n in names if _imports_as(n, package)]


def _imports_as(path: str, package: str) -> bool:
    parts = path.split("/")
    if parts[0] == "__pycache__" and len(parts) == 2:
        return parts[1].startswith(package + ".")
    return len(parts) == 1 and parts[0].startswith(package + ".")


def resolve_all(tree: GitTree, spelled: Iterable[str]) -> tuple[set[str], list[Resolved]]:
    """(every repository path the gate reads through `tree`: each resolved path and each link on
    the way, and the links inside resolved folders with their targets; the unresolvable ones)."""
    paths: set[str] = set()
    problems: list[Resolved] = []
    queue = sorted(set(spelled), reverse=True)
    seen: set[str] = set()
    while queue:
        name = queue.pop()
        if name in seen:
            continue
        seen.add(name)
        if len(seen) > MAX_RESOLVED:
            problems.append(Resolved(name, name, (), f"more than {MAX_RESOLVED:,} paths to follow"))
            break
        where = tree.resolve(name)
        paths.update(where.links)
        if where.problem:
            problems.append(where)
            continue
        paths.add(where.path)
        if tree.is_dir(where.path):
            queue += tree.links_under(where.path)  # a file of the folder may be a link elsewhere
    return paths, problems


def touches(changed: Iterable[str], paths: Iterable[str], packages: Iterable[str] = ()) -> list[str]:
    """The changed files that are, lie under, or lie above (a file or link replacing a folder, a
    submodule) one of `paths` ("" is the whole repository), or that Python could import as one of
    the loader's `packages`."""
    inputs, imported = set(paths), set(packages)
    if "" in inputs:
        return sorted(changed)
    ancestors = {folder for p in inputs for folder in _folders_of(p)}  # the folders holding an input
    hits = []
    for name in changed:
        if (
            name in inputs
            or name in ancestors
            or any(folder in inputs for folder in _folders_of(name))
            or any(_imports_as(name, pkg) for pkg in imported)
        ):
            hits.append(name)
    return sorted(hits)


def _folders_of(path: str) -> list[str]:
    """`a/b/c` -> [`a`, `a/b`]."""
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def checkout_files(changed: Iterable[str]) -> list[str]:
    """The changed files that decide what a checkout writes (CHECKOUT_FILES, in any folder)."""
    return sorted(n for n in changed if n.rsplit("/", 1)[-1].casefold() in CHECKOUT_FILES)


def journal_files(changed: Iterable[str]) -> list[str]:
    """The changed files of the update journal (edges/journal.py), in any folder: the journal, the
    `.NAME.evalgate-new` files it stages and their temporary files. `run` and `validate` refuse a
    probe set or baseline folder that holds a journal, so one merged unscored refuses every later
    run; wherever it sits (a baseline or manifest outside the fixed folders too), the PR is scored
    and refused."""
    out = []
    for name in changed:
        leaf = name.rsplit("/", 1)[-1].casefold()
        if leaf.startswith(JOURNAL) or (leaf.startswith(".") and STAGED_SUFFIX in leaf):
            out.append(name)
    return sorted(out)


_SHOWN = re.compile(r"[^A-Za-z0-9._/-]")


def shown_names(paths: Iterable[str]) -> list[str]:
    """Paths for the `checkout-changed` line: each character outside `[A-Za-z0-9._/-]` as `_`, so
    any name (a space, a newline) stays one listed entry that names the file the PR changed."""
    return sorted({_SHOWN.sub("_", p) for p in paths})


def _under(path: str, folders: set[str]) -> bool:
    return any(path == f or path.startswith(f + "/") for f in folders)


def plain(paths: Iterable[str]) -> list[str]:
    return sorted(p for p in paths if _PLAIN.fullmatch(p))


def bootstrap_reason(base: GitTree, base_cfg: dict[str, Any] | None) -> str | None:
    if base_cfg is None:
        return f"{CONFIG_FILENAME} is missing on the base branch"
    baseline = base_cfg.get("baseline")
    if not isinstance(baseline, str) or baseline.lower() == "none":
        return f"{CONFIG_FILENAME} on the base branch gates against no baseline"
    where = base.resolve(baseline)
    if where.problem is None and not base.is_file(where.path):
        return f"{baseline} is missing on the base branch"
    return None


def base_inputs(base: GitTree, base_cfg: dict[str, Any]) -> list[str]:
    """evalgate.yml and every baseline the base configuration names (the run's `baseline`; suites
    have none of their own, docs/suites.md), each resolved in the base tree: the links on the way
    and the file they lead to. Refused when one cannot be named for the restore."""
    # the baseline's history and anchor (gate/history.py) too: restored from the base commit like
    # the baseline (absent there: absent for the gate), taken from the PR only under the label and
    # only as an extension of the base's (github/history_scope.py)
    wanted = [CONFIG_FILENAME, base_cfg["baseline"], *history_paths(base_cfg["baseline"])]
    out: list[str] = []
    for name in wanted:
        where = base.resolve(name)
        if where.problem:
            raise Refused(
                f"the base branch's {name!r} cannot be restored from the base commit: {where.problem}"
            )
        for path in (*where.links, where.path):
            if not _PLAIN.fullmatch(path):
                raise Refused(
                    f"the base branch's {name!r} resolves to {path!r}, which is not a plain path "
                    "(letters, digits, `._/-`, not starting with a dot or dash): the workflow cannot "
                    "restore it from the base commit; rename it on the base branch"
                )
            if path not in out:
                out.append(path)
    return out


def decide(base_rev: str, head_rev: str) -> list[str]:
    """The GITHUB_OUTPUT lines; Refused (exit 2) when the decision cannot be made."""
    try:
        return _decide(base_rev, head_rev)
    except TreeError as exc:
        raise Refused(str(exc)) from None


def _decide(base_rev: str, head_rev: str) -> list[str]:
    base = GitTree(base_rev)
    head = GitTree(head_rev)
    merge_base = git("merge-base", base_rev, head_rev)
    trees = [base, head]
    if merge_base.returncode == 0 and merge_base.stdout.strip() not in (base_rev, ""):
        trees.append(GitTree(merge_base.stdout.strip()))
    try:
        base_cfg = config_at(base)
    except ConfigError as exc:
        raise Refused(f"the base branch's configuration cannot be read: {exc.message}") from None
    why = bootstrap_reason(base, base_cfg)
    if why:
        raise Refused(bootstrap_text(why, base_rev, head))
    assert base_cfg is not None
    restore = base_inputs(base, base_cfg)
    try:
        head_cfg = config_at(head)
    except ConfigError as exc:
        # The PR's evalgate.yml is no configuration: evalgate.yml itself changed, so the PR is
        # relevant whatever it names, and the gate says what is wrong with it.
        print(f"evalgate: the PR's {CONFIG_FILENAME} cannot be read: {exc.message}", file=sys.stderr)
        head_cfg = None
    diff = git("diff", "--no-renames", "--name-only", "-z", f"{base_rev}...{head_rev}")
    if diff.returncode != 0:
        raise Refused(f"git diff {base_rev}...{head_rev} failed: {diff.stderr.strip()}")
    changed = [f for f in diff.stdout.split("\0") if f]
    packages = {p for p in (loader_package(base_cfg), loader_package(head_cfg)) if p}
    spelled = spelled_paths([base_cfg, head_cfg])
    paths: set[str] = set()
    problems: list[Resolved] = []
    for tree in trees:
        names = spelled | {f for pkg in packages for f in loader_files(pkg, tree.entries)}
        found, unresolved = resolve_all(tree, names)
        paths |= found
        problems += [p for p in unresolved if p.problem]
    journals = set(journal_files(changed))
    hits = sorted(set(touches(changed, paths, packages)) | set(checkout_files(changed)) | journals)
    for problem in problems[:20]:
        print(
            f"evalgate: {problem.spelled!r} cannot be resolved ({problem.problem}): the PR is scored",
            file=sys.stderr,
        )
    attributes = set(checkout_files(changed))
    for name in hits[:20]:
        what = (
            "which decides the bytes a checkout writes"
            if name in attributes
            else "a file of an unfinished update, which the gate refuses"
            if name in journals
            else "which the gate reads"
        )
        print(f"evalgate: the PR changes {name!r}, {what}", file=sys.stderr)
    # The checkpoint is what the PR brings to be judged, not a change of the gate: the report's
    # "changes the gate itself" diff (gate-paths) leaves it out, unless another input is reached
    # through it; it still makes the PR relevant, and is printed apart (checkpoint-paths).
    checkpoint = {
        s
        for cfg in (base_cfg, head_cfg)
        for value in [(cfg or {}).get("checkpoint")]
        if isinstance(value, str) and value.lower() != "none"
        for s in spellings(value)
    }
    weights: set[str] = set()
    others: set[str] = set()
    for tree in trees:
        weights |= resolve_all(tree, checkpoint)[0]
        others |= resolve_all(tree, spelled - checkpoint)[0]
    weights -= others
    shown = {p for p in paths if not _under(p, weights) or _under(p, others)}
    relevant = bool(hits or problems)
    if not relevant:
        print("evalgate: nothing the gate reads changed in this PR", file=sys.stderr)
    return [
        f"relevant={'true' if relevant else 'false'}",
        "gate-paths=" + " ".join(plain(shown)),
        "base-inputs=" + " ".join(restore),
        # A merged checkout file changes the bytes every later checkout writes (CRLF baselines no
        # longer hash to their history): scored is not enough, it is the PR changing the gate's
        # own inputs, approved by a maintainer or refused (docs/approval.md).
        "checkout-changed=" + " ".join(shown_names(attributes)),
        "checkpoint-paths=" + " ".join(plain(weights)),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evalgate.github.pr_scope", description=__doc__)
    parser.add_argument("--base", required=True, help="the base branch's commit")
    parser.add_argument("--head", default="HEAD", help="the PR's commit (default HEAD)")
    args = parser.parse_args(argv)
    try:
        lines = decide(args.base, args.head)
    except Refused as exc:
        text = str(exc)
        print(text if text.startswith("evalgate:") else f"evalgate: refused: {text}", file=sys.stderr)
        return EXIT_REFUSED
    for line in lines:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
