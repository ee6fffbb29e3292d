"""The gate configuration (`evalgate.yml`): one frozen `GateConfig`, typed defaults, unknown keys refused.

Defaults live in `defaults/evalgate.yml` inside the package (the embedded default, docs/design.md
"Command line"); a repository's own `evalgate.yml` overrides any subset of it, and command-line flags
override both. Every path in the file is relative to the *root*: the folder holding the config
file, or, for the embedded default, the folder the command runs in (falling back to the bundled
demo when that folder has no probe set: `docker run --rm evalgate` with no arguments).
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import json
import math
import os
from dataclasses import dataclass, fields
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from evalgate.errors import ConfigError
from evalgate.gate.cluster import VERB_FORM_FIELDS
from evalgate.gate.rules import GateRules
from evalgate.paths import NotRegularFile, TooLarge, allowed_roots, bundled_root, display_path, read_regular
from evalgate.probeset.coverage import CoverageConfig
from evalgate.probeset.scripts import skeleton
from evalgate.schemas import schema
from evalgate.types import MULTIPLE_CHOICE

CONFIG_FILENAME = "evalgate.yml"


def default_config_text() -> str:
    return resources.files("evalgate").joinpath("defaults", CONFIG_FILENAME).read_text("utf-8")


def default_config_dict() -> dict[str, Any]:
    return yaml.safe_load(default_config_text())


@dataclass(frozen=True)
class ScoringConfig:
    method: str  # candidate | candidate-raw | sentence
    normalization: str  # tokens | chars | bytes | none
    batch_size: int  # sequences per forward pass
    dtype: str  # float32 (the only dtype whose numbers we promise to be reproducible)
    threads: int  # torch intra-op threads; 0 = torch's default
    # cuda | auto (cuda when one is visible, else cpu); None is cpu, the default, so that a
    # configuration without the key (or with `device: cpu`) pins as it did before the key existed.
    # The device a run used is part of its comparability manifest (docs/scoring.md, "Device").
    device: str | None = None
    max_positions: int = 8192  # most token positions one forward runs (docs/scoring.md "Memory")


@dataclass(frozen=True)
class LeakConfig:
    policy: str  # refuse | exclude
    detectors: tuple[str, ...]  # subset of exact, template, ngram
    window: int  # n-gram window of the proximity detector


@dataclass(frozen=True)
class ReportConfig:
    max_chars: int  # GitHub's comment limit is 65,536
    max_flipped: int  # flipped probes listed before folding/cutting
    review_entropy: float  # normalised entropy above which an item "needs human review"
    trend_window: int = 8  # baselines a drift trend shows (the last N), then this run (docs/gate.md)


@dataclass(frozen=True)
class SuiteConfig:
    """One entry of `suites:` (docs/suites.md): what a suite reads and how it is sliced."""

    name: str
    kind: str  # verb-forms | multiple-choice
    probes: tuple[str, ...]
    template: str | None  # None: the run's (verb-forms) or "{prompt}" (multiple-choice)
    manifest: str  # default: MANIFEST.json beside the first probe file
    grammar: str | None  # verb-forms only; None: the run's
    train: tuple[str, ...]
    # multiple-choice: the declared dimensions, each with its allowed values (None: any value)
    slices: tuple[tuple[str, tuple[str, ...] | None], ...]
    min_per_value: int  # multiple-choice: live items each declared slice value needs
    coverage: CoverageConfig | None  # verb-forms: the suite's own cells (None: the run's)
    gated: tuple[str, ...]  # the suite's gated families, unprefixed ("overall", "topic", ...)
    pin: dict[str, Any]  # the suite as written (defaults filled in), for the pinned configuration
    # Several suites: the suite's own held-out text for perplexity (None: none). With one suite
    # its `test:` is the run's (docs/suites.md, "Perplexity").
    test: str | None = None

    @property
    def dims(self) -> dict[str, tuple[str, ...] | None]:
        return dict(self.slices)


@dataclass(frozen=True)
class GateConfig:
    root: Path  # paths below are relative to this
    source: str  # where the config came from ("embedded default" or a file path)
    probes: tuple[str, ...]
    template: str
    manifest: str
    grammar: str
    train: tuple[str, ...]
    test: str | None  # None: no perplexity (`test: null`)
    checkpoint: str | None
    loader: str | None
    baseline: str | None  # None = no gate (`--baseline none`)
    out: str
    scoring: ScoringConfig
    coverage: CoverageConfig
    leaks: LeakConfig
    gate: GateRules
    report: ReportConfig
    # Paths named on the command line: the operator's choice, allowed wherever they are
    # (edges/inputs.py); a path from evalgate.yml must stay inside the repository.
    explicit_paths: tuple[str, ...] = ()
    # `suites:` (docs/suites.md); empty for a configuration without it, which is read exactly as
    # before suites existed. `suite` is set on the view of one suite (`for_suite`).
    suites: tuple[SuiteConfig, ...] = ()
    suite: SuiteConfig | None = None

    @property
    def multi_suite(self) -> bool:
        """Slice keys carry the suite's name (`SUITE/dim:value`) when more than one suite runs."""
        return len(self.suites) > 1

    def suite_named(self, name: str) -> SuiteConfig:
        for s in self.suites:
            if s.name == name:
                return s
        known = ", ".join(s.name for s in self.suites) or "none: evalgate.yml declares no `suites:`"
        raise ConfigError(f"--suite {name}: no such suite (suites: {known})")

    def for_suite(self, suite: SuiteConfig) -> GateConfig:
        """The configuration as one suite sees it: its files in the run's places."""
        return dataclasses.replace(
            self,
            probes=suite.probes,
            template=suite.template or self.template,
            manifest=suite.manifest,
            grammar=suite.grammar or self.grammar,
            train=suite.train,
            coverage=suite.coverage or self.coverage,
            suite=suite,
        )

    @property
    def is_items(self) -> bool:
        """This view reads a multiple-choice suite."""
        return self.suite is not None and self.suite.kind == MULTIPLE_CHOICE

    def roots(self) -> tuple[Path, ...]:
        """The folders configured inputs may resolve into (paths.allowed_roots)."""
        return allowed_roots(self.root, self.explicit_paths)

    def path(self, rel: str) -> Path:
        p = Path(rel)
        return p if p.is_absolute() else self.root / p

    def pin(self) -> dict[str, Any]:
        """The effective configuration as plain JSON: copied into every result and baseline.

        Paths are shown relative to the root, and `out` is left out: where a result is written
        is not how it was measured, and results.json must not change with the folder it lands in.
        """
        out: dict[str, Any] = {}
        for f in fields(self):
            if f.name in ("root", "source", "out", "explicit_paths", "suite"):
                continue
            value = getattr(self, f.name)
            if f.name == "suites":
                if value:
                    out["suites"] = {s.name: s.pin for s in value}
                continue
            if self.suites and f.name in _SUITE_KEYS:
                continue  # each suite names its own files
            if hasattr(value, "__dataclass_fields__"):
                value = {k.name: _plain(getattr(value, k.name)) for k in fields(value)}
                value.pop("min_ns", None)  # each suite's pin has its own (see SuiteConfig.pin)
                for name in _UNSET_IF_EMPTY:
                    if name in value and not value[name]:
                        del value[name]  # unset: pinned exactly as before the key existed
                    elif name in value:
                        value[name] = dict(value[name])
                for name in _UNSET_IF_NONE:
                    if name in value and value[name] is None:
                        del value[name]
            elif f.name in _PATH_KEYS:
                value = self._relative(value)
            out[f.name] = _plain(value)
        return out

    def _relative(self, value: Any) -> Any:
        if isinstance(value, tuple):
            return tuple(self._relative(v) for v in value)
        if not isinstance(value, str):
            return value
        if not Path(value).is_absolute():
            return value
        return display_path(self.root, Path(value))


_PATH_KEYS = ("probes", "template", "manifest", "grammar", "train", "test", "checkpoint", "baseline")
# What a suite declares for itself; with `suites:` these top-level keys are not read (docs/suites.md).
_SUITE_KEYS = ("probes", "template", "manifest", "grammar", "train", "coverage")
_UNSET_IF_EMPTY = ("min_accuracy", "tolerances", "drift_tolerances")
# optional scalars, left out of the pin when unset (pinned as before they existed): gate.multiplicity
# (unset: Holm) and gate.cluster (unset: probe by probe)
_UNSET_IF_NONE = ("multiplicity", "cluster", "drift_tolerance", "device")


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    return value


def _deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def _not_finite(data: Any, where: str = "") -> list[str]:
    """Dotted paths of every NaN or infinite number. YAML writes them `.nan` and `.inf`; a NaN
    passes every `minimum`/`maximum` of the schema (each comparison is false), and a NaN
    tolerance, floor or alpha never fails anything."""
    if isinstance(data, float) and not math.isfinite(data):
        return [where or "(top level)"]
    if isinstance(data, dict):
        return [p for k, v in data.items() for p in _not_finite(v, f"{where}.{k}" if where else str(k))]
    if isinstance(data, list):
        return [p for i, v in enumerate(data) for p in _not_finite(v, f"{where}[{i}]")]
    return []


def _schema_errors(data: Any, source: str) -> list[str]:
    validator = jsonschema.Draft202012Validator(schema("config"))
    messages = [
        f"{source}: {where}: must be a finite number (not NaN or infinity)" for where in _not_finite(data)
    ]
    for err in sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path)):
        where = ".".join(str(p) for p in err.absolute_path) or "(top level)"
        if err.validator == "additionalProperties":
            known = list(err.schema.get("properties", {}))
            extra = sorted(set(err.instance) - set(known))
            messages.append(f"{source}: {where}: unknown key(s) {', '.join(map(_with_guess(known), extra))}")
        elif err.validator in ("oneOf", "anyOf") and (wanted := _describe_options(err.validator_value)):
            messages.append(f"{source}: {where}: {json.dumps(err.instance)} is not {wanted}")
        elif err.validator in ("oneOf", "anyOf") and (meant := _within_option(err)):
            # the option of the instance's own type says what is wrong: "is not valid under any of
            # the given schemas" says nothing (a dimension named `Topic`)
            messages += [f"{source}: {where}{m}" for m in meant]
        else:
            messages.append(f"{source}: {where}: {err.message}")
    return messages


def _within_option(err: Any) -> list[str]:
    """The errors of the one-of option whose type the value has (not its type mismatches), each
    as `.path: message`, a key that breaks a name pattern said as such; [] when none is clear."""
    out = []
    for sub in err.context or ():
        if sub.validator == "type":
            continue
        path = "".join(f".{p}" for p in sub.relative_path)
        if sub.validator == "pattern":
            pattern = str(sub.validator_value).removesuffix("$(?!\\n)").removesuffix("$")
            what = "key" if "propertyNames" in sub.schema_path else "value"
            out.append(
                f"{path}: {what} {json.dumps(sub.instance)} must match the pattern {pattern}$ "
                "(lower-case letters, digits and _, starting with a letter)"
                if pattern.startswith("^[a-z]")
                else f"{path}: {what} {json.dumps(sub.instance)} must match the pattern {pattern}$"
            )
        else:
            out.append(f"{path}: {sub.message}")
    return out


def _describe_options(options: list[dict[str, Any]]) -> str | None:
    """ "a string or a list of strings": jsonschema's own oneOf message names no type at all."""
    names = []
    for option in options:
        if option.get("type") == "string":
            names.append("a string")
        elif option.get("type") == "array" and (option.get("items") or {}).get("type") == "string":
            least = option.get("minItems")
            names.append("a list of strings" + (f" (at least {least})" if least else ""))
        else:
            return None
    return " or ".join(names)


def _with_guess(known: list[str]):
    def name(key: Any) -> str:
        close = difflib.get_close_matches(str(key), known, n=1)
        return f"{key} (did you mean '{close[0]}'?)" if close else str(key)

    return name


def default_config_hint() -> str:
    return f"see the commented defaults: {resources.files('evalgate').joinpath('defaults', CONFIG_FILENAME)}"


# evalgate.yml is a few KB; anything past this is not a configuration (paths.read_regular).
MAX_CONFIG_BYTES = 4 << 20


def read_config_file(path: Path, source: str) -> dict[str, Any]:
    """Parse one evalgate.yml; unreadable or non-UTF-8 bytes are a ConfigError, not a crash.

    Read through the bounded regular-file reader: an evalgate.yml that is a link to /dev/zero, a
    FIFO, a folder or a huge sparse file is refused by what it is, never read (nor silently
    replaced by the embedded default)."""
    try:
        data = read_regular(path, MAX_CONFIG_BYTES)
    except NotRegularFile as exc:
        if exc.kind == "a directory":
            raise ConfigError(f"{source}: is a folder, not a configuration file; refused") from None
        raise ConfigError(
            f"{source}: {exc.kind}, not a regular file; refused",
            hint="evalgate.yml must be a plain file",
        ) from None
    except TooLarge as exc:
        raise ConfigError(
            f"{source}: {exc.size:,} bytes or more, over the {exc.cap:,}-byte limit for a "
            "configuration; refused"
        ) from None
    except FileNotFoundError:
        if os.path.islink(path):
            raise ConfigError(f"{source}: a symbolic link to a file that does not exist") from None
        raise ConfigError(f"{source}: configuration file not found") from None
    except OSError as exc:
        raise ConfigError(f"{source}: cannot read the configuration: {exc.strerror or exc}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{source}:{line}: byte 0x{data[exc.start]:02X} is not valid UTF-8",
            hint="save the configuration file as UTF-8",
        ) from None
    return parse_config_text(text, source)


def parse_config_text(text: str, source: str) -> dict[str, Any]:
    from evalgate import safe_yaml

    try:
        data = safe_yaml.load(text, safe_yaml.UniqueKeyLoader)  # a SafeLoader: no objects, no aliases
    except safe_yaml.DuplicateKey as exc:
        raise ConfigError(
            f"{source}:{exc.again}: key '{exc.key}' appears twice in the same mapping",
            hint="keep one of the two (YAML would silently keep only the last)",
        ) from None
    except yaml.YAMLError as exc:
        where, problem = safe_yaml.located(source, exc)
        raise ConfigError(f"{where}: not valid YAML ({problem})") from None
    except RecursionError:
        raise ConfigError(f"{source}: nested too deeply to be a configuration") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: the configuration must be a mapping of keys to values")
    return data


def find_root(cwd: Path) -> Path:
    """The folder the embedded default is rooted at (see module docstring)."""
    default_probes = default_config_dict()["probes"][0]
    if (cwd / default_probes).exists():
        return cwd
    bundle = bundled_root()
    if bundle is not None and (bundle / default_probes).exists():
        return bundle
    return cwd


def load_config(
    path: str | os.PathLike[str] | None = None,
    overrides: dict[str, Any] | None = None,
    cwd: Path | None = None,
) -> GateConfig:
    """Read the config (explicit path, else ./evalgate.yml, else the embedded default).

    `overrides` are already-parsed flag values in the config's own shape (None values ignored).
    Raises ConfigError naming every problem at once.
    """
    cwd = Path.cwd() if cwd is None else cwd
    data = default_config_dict()
    if path is not None:
        cfg_path = Path(path)
        if not cfg_path.is_absolute():
            cfg_path = cwd / cfg_path
        if cfg_path.is_dir():
            raise ConfigError(
                f"{path}: is a folder, not a configuration file",
                hint=f"name the file itself, e.g. --config {Path(path) / CONFIG_FILENAME}",
            )
        user = read_config_file(cfg_path, str(path))
        root, source = cfg_path.parent, str(path)
    elif os.path.lexists(cwd / CONFIG_FILENAME):
        # Whatever is there (a link to /dev/zero, a FIFO, a folder, a dangling link) is this
        # folder's configuration, refused by read_config_file: never the embedded default instead.
        user = read_config_file(cwd / CONFIG_FILENAME, CONFIG_FILENAME)
        root, source = cwd, CONFIG_FILENAME
    else:
        user, root, source = {}, find_root(cwd), "embedded default"
        if root != cwd:
            # Inputs borrowed from the bundled demo, outputs where the command runs: the bundle is
            # read-only in the image, and `docker run -v "$PWD:/work" -w /work` expects them in /work.
            user = {"out": str(cwd / default_config_dict()["out"])}
    problems = _schema_errors(user, source)
    if problems:
        raise ConfigError(
            "invalid configuration:\n  " + "\n  ".join(problems),
            hint=default_config_hint(),
        )
    data = _deep_merge(data, user)
    explicit: list[str] = []
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        if key in _PATH_KEYS:
            explicit += [
                v
                for v in (value if isinstance(value, list) else [value])
                if isinstance(v, str) and v.lower() != "none"
            ]
        if isinstance(value, dict):
            data[key] = _deep_merge(data.get(key, {}), {k: v for k, v in value.items() if v is not None})
        else:
            data[key] = value
    problems = _schema_errors(data, "effective configuration")
    if not problems and user.get("suites"):
        problems += _suite_problems(user, overrides or {}, source, root)
    if not problems:
        problems += _cluster_problems(data, source)
    cov = data.get("coverage") or {}
    low, high = cov.get("adversarial_per_category_min"), cov.get("adversarial_per_category_max")
    if not problems and low > high:
        problems.append(
            f"{source}: coverage.adversarial_per_category_min ({low}) is above "
            f"coverage.adversarial_per_category_max ({high}): no count could pass"
        )
    if problems:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems))
    return _build(data, root, source, tuple(explicit))


def _tup(v: Any) -> tuple[str, ...]:
    return tuple(v) if isinstance(v, list) else (v,)


_VERB_COVERAGE = tuple(f.name for f in fields(CoverageConfig))
_ITEM_GATE_KEYS = ("tolerance", "min_accuracy", "tolerances", "min_n", "slices")


def _declared_value_problems(slices: Any, where: str) -> list[str]:
    """Declared values of one dimension that read the same (`easy` and the Cyrillic `еаѕу`): two
    rows that look identical in every table (probeset/scripts.py, docs/items.md)."""
    out: list[str] = []
    if not isinstance(slices, dict):
        return out
    for dim, values in slices.items():
        first: dict[str, str] = {}
        for value in values or []:
            seen = first.setdefault(skeleton(value), value)
            if seen != value:
                out.append(
                    f"{where}.{dim}: {json.dumps(value, ensure_ascii=False)} reads the same as "
                    f"{json.dumps(seen, ensure_ascii=False)} but is another string (look-alike letters "
                    "of another script, or case); declare one of them"
                )
    return out


def _suite_problems(user: dict[str, Any], overrides: dict[str, Any], source: str, root: Path) -> list[str]:
    """What the schema cannot say about `suites:` (docs/suites.md)."""
    out = []
    for key in _SUITE_KEYS:
        if key in user:
            out.append(
                f"{source}: {key}: with `suites:` every suite names its own {key}; move it into the suite(s)"
            )
        if overrides.get(key) is not None:
            out.append(
                f"--{key}: with `suites:` in {source} each suite names its own files; edit the suite instead"
            )
    tested = [name for name, suite in user["suites"].items() if "test" in suite]
    if tested and len(user["suites"]) == 1 and "test" in user:
        out.append(
            f"{source}: test: suite {tested[0]} names its own `test:`; with one suite they are the same "
            "setting, so keep one of the two"
        )
    if tested and overrides.get("test") is not None:
        out.append(
            f"--test: suite(s) {', '.join(tested)} in {source} name their own `test:`; edit the suite instead"
        )

    # One file is one file however it is spelled (`./quiz/MANIFEST.json`, `quiz/x/../MANIFEST.json`,
    # a link): compared resolved against the configuration's folder, never as strings.
    def identity(rel: str) -> Path:
        return (root / rel).resolve()

    manifests: dict[Path, tuple[str, str]] = {}
    probe_files: dict[Path, tuple[str, str]] = {}
    for name, suite in user["suites"].items():
        probes = _tup(suite["probes"])
        manifest = suite.get("manifest") or (Path(probes[0]).parent / "MANIFEST.json").as_posix()
        other, spelled = manifests.setdefault(identity(manifest), (name, manifest))
        if other != name:
            same = "" if spelled == manifest else f" (written {spelled} there: the same file)"
            out.append(
                f"{source}: suites.{name}.manifest: {manifest} is suite {other}'s manifest "
                f"too{same}; each suite seals its own (give one a `manifest:` of its own, or put its "
                "files in a folder of their own)"
            )
        for rel in dict.fromkeys(probes):
            other, spelled = probe_files.setdefault(identity(rel), (name, rel))
            if other != name:
                same = "" if spelled == rel else f" (written {spelled} there: the same file)"
                out.append(
                    f"{source}: suites.{name}.probes: {rel} is a probe file of suite {other} "
                    f"too{same}; an item belongs to one suite (move it, or drop the file from one)"
                )
    for name, suite in user["suites"].items():
        kind = suite["kind"]
        cov = suite.get("coverage") or {}
        if kind == MULTIPLE_CHOICE:
            for key in sorted(set(cov) & set(_VERB_COVERAGE)):
                out.append(f"{source}: suites.{name}.coverage.{key}: a verb-forms rule; a multiple-choice "
                           "suite takes `min_per_value`")  # fmt: skip
            if "grammar" in suite:
                out.append(f"{source}: suites.{name}.grammar: only a verb-forms suite reads a grammar table")
            dims = list(suite.get("slices") or [])
            if "overall" in dims:
                # `overall` is the family of the whole suite (its slice key is `overall`, a
                # dimension's are `dim:value`): one name cannot be both (docs/suites.md)
                out.append(
                    f"{source}: suites.{name}.slices: 'overall' is reserved for the whole suite "
                    "(every suite has that slice already); name the dimension otherwise"
                )
            out += _declared_value_problems(suite.get("slices"), f"{source}: suites.{name}.slices")
            for family in (suite.get("gate") or {}).get("slices") or []:
                if family != "overall" and family not in dims:
                    out.append(
                        f"{source}: suites.{name}.gate.slices: '{family}' is not a declared dimension "
                        f"(slices: {', '.join(dims) or 'none'}; 'overall' is the whole suite)"
                    )
        else:
            if "min_per_value" in cov:
                out.append(
                    f"{source}: suites.{name}.coverage.min_per_value: only for a multiple-choice suite"
                )
            if "slices" in suite:
                out.append(
                    f"{source}: suites.{name}.slices: a verb-forms suite's slices are its fields "
                    "(language, tense, ...); choose the gated ones under its `gate.slices`"
                )
            allowed = set(schema("config")["properties"]["gate"]["properties"]["slices"]["items"]["enum"])
            for family in (suite.get("gate") or {}).get("slices") or []:
                if family not in allowed:
                    out.append(
                        f"{source}: suites.{name}.gate.slices: '{family}' is not one of "
                        + ", ".join(sorted(allowed))
                    )
    return out


def _cluster_problems(data: dict[str, Any], source: str) -> list[str]:
    """`gate.cluster` names a field some probe can carry (docs/gate.md, "Clustered flips").

    A verb-form suite (or a run without `suites:`) offers the probe fields of
    gate/cluster.py; a multiple-choice suite its declared slice dimensions. A field no suite has
    would make every probe a cluster of its own: a typo that silently changes nothing.
    """
    field = (data.get("gate") or {}).get("cluster")
    if field is None:
        return []
    out = []
    if data["gate"].get("rule") != "paired":
        out.append(
            f"{source}: gate.cluster: '{field}' needs gate.rule: paired (the wilson rule has no paired test)"
        )
    if data["gate"].get("multiplicity") == "westfall-young":
        # its joint draws flip probes one by one, which is the independence clustering gives up
        out.append(
            f"{source}: gate.cluster: '{field}' cannot go with gate.multiplicity: westfall-young "
            "(its draws flip single probes); use holm with clusters"
        )
    known: list[str] = []
    suites = data.get("suites") or {}
    kinds = [(s.get("kind"), s.get("slices")) for s in suites.values()] or [("verb-forms", None)]
    for kind, dims in kinds:
        if kind == MULTIPLE_CHOICE:
            known += list(dims or [])
        else:
            known += list(VERB_FORM_FIELDS)
    known = list(dict.fromkeys(known))
    if field not in known:
        close = difflib.get_close_matches(field, known, n=1)
        guess = f" (did you mean '{close[0]}'?)" if close else ""
        out.append(
            f"{source}: gate.cluster: unknown cluster field '{field}'{guess}; "
            f"this configuration's probes carry {', '.join(known)}"
        )
    return out


def _floors(value: Any, prefix: str) -> list[tuple[str, float]]:
    """`min_accuracy` as (slice key, floor) pairs; a number is the floor of the suite's (or run's) overall."""
    if value is None:
        return []
    if isinstance(value, int | float):
        return [(f"{prefix}overall", float(value))]
    return [(f"{prefix}{key}", float(v)) for key, v in value.items()]


def _suites(data: dict[str, Any]) -> tuple[tuple[SuiteConfig, ...], dict[str, Any]]:
    """The suites, and the run's gate rules with every suite's overrides folded in (slice keys
    prefixed with the suite's name when more than one suite runs)."""
    declared = data.get("suites") or {}
    multi = len(declared) > 1
    gate = dict(data["gate"])
    floors = _floors(gate.get("min_accuracy"), "")
    tolerances = [(k, float(v)) for k, v in (gate.get("tolerances") or {}).items()]
    min_ns: list[tuple[str, int]] = []
    families: list[str] = ["overall"] if multi else []
    suites = []
    for name, raw in declared.items():
        prefix = f"{name}/" if multi else ""
        kind = raw["kind"]
        probes = _tup(raw["probes"])
        manifest = raw.get("manifest") or (Path(probes[0]).parent / "MANIFEST.json").as_posix()
        own_gate = raw.get("gate") or {}
        if kind == MULTIPLE_CHOICE:
            slices_raw = raw.get("slices") or []
            if isinstance(slices_raw, list):
                dims: tuple[tuple[str, tuple[str, ...] | None], ...] = tuple((d, None) for d in slices_raw)
            else:
                dims = tuple((d, tuple(v) if v else None) for d, v in slices_raw.items())
            gated = tuple(own_gate.get("slices") or ("overall", *(d for d, _ in dims)))
            min_per_value = int((raw.get("coverage") or {}).get("min_per_value", 1))
            coverage = None
            grammar = None
        else:
            dims, min_per_value = (), 0
            gated = tuple(own_gate.get("slices") or gate["slices"])
            cov = {**data["coverage"], **(raw.get("coverage") or {})}
            coverage = CoverageConfig(
                **{**cov, "adversarial_categories": tuple(cov["adversarial_categories"])}
            )
            grammar = raw.get("grammar") or data["grammar"]
        families += [f"{prefix}{f}" for f in gated]
        floors += _floors(own_gate.get("min_accuracy"), prefix)
        tolerances += [(f"{prefix}{k}", float(v)) for k, v in (own_gate.get("tolerances") or {}).items()]
        if "tolerance" in own_gate:
            if multi:
                tolerances.append((f"{name}/*", float(own_gate["tolerance"])))
            else:
                gate["tolerance"] = own_gate["tolerance"]
        if "min_n" in own_gate:
            if multi:  # the suite's slices only (its `SUITE/overall` included)
                min_ns.append((f"{name}/*", int(own_gate["min_n"])))
            else:
                gate["min_n"] = own_gate["min_n"]
        pin: dict[str, Any] = {
            "kind": kind,
            "probes": list(probes),
            "template": raw.get("template"),
            "manifest": manifest,
            "train": list(_tup(raw.get("train") or [])),
        }
        if kind == MULTIPLE_CHOICE:
            pin["slices"] = {d: list(v) if v else None for d, v in dims}
            pin["coverage"] = {"min_per_value": min_per_value}
        else:
            pin["grammar"] = grammar
            pin["coverage"] = {k: _plain(getattr(coverage, k)) for k in _VERB_COVERAGE}
        pin["gate"] = {k: own_gate[k] for k in _ITEM_GATE_KEYS if k in own_gate}
        if "test" in raw:  # pinned only when given: a pin without it reads as before the key existed
            pin["test"] = raw["test"]
        suites.append(
            SuiteConfig(
                name=name,
                kind=kind,
                probes=probes,
                template=raw.get("template"),
                manifest=manifest,
                grammar=grammar,
                train=_tup(raw.get("train") or []),
                slices=dims,
                min_per_value=min_per_value,
                coverage=coverage,
                gated=gated,
                pin=pin,
                test=raw.get("test") if multi else None,
            )
        )
        if "test" in raw and not multi:
            data["test"] = raw["test"]  # one suite: its test set is the run's
    gate["slices"] = list(dict.fromkeys(families))
    gate["min_accuracy"] = tuple(floors)
    gate["tolerances"] = tuple(tolerances)
    gate["min_ns"] = tuple(min_ns)
    return tuple(suites), _drift(gate)


def _drift(gate: dict[str, Any]) -> dict[str, Any]:
    """`gate.drift_tolerance`: a number for every gated slice, or a map of slice keys (only those
    slices are checked for drift); GateRules holds them apart (docs/gate.md, "Drift")."""
    value = gate.pop("drift_tolerance", None)
    if isinstance(value, dict):
        gate["drift_tolerances"] = tuple((k, float(v)) for k, v in value.items())
    elif value is not None:
        gate["drift_tolerance"] = float(value)
    return gate


def _build(data: dict[str, Any], root: Path, source: str, explicit: tuple[str, ...] = ()) -> GateConfig:
    tup = _tup

    baseline = data.get("baseline")
    if isinstance(baseline, str) and baseline.lower() == "none":
        baseline = None
    cov = data["coverage"]
    leaks = data["leaks"]
    gate = dict(data["gate"])
    suites: tuple[SuiteConfig, ...] = ()
    if data.get("suites"):
        suites, gate = _suites(data)
    else:
        gate["min_accuracy"] = tuple(_floors(gate.get("min_accuracy"), ""))
        gate["tolerances"] = tuple((k, float(v)) for k, v in (gate.get("tolerances") or {}).items())
        gate = _drift(gate)
    report = data["report"]
    scoring = dict(data["scoring"])
    if scoring.get("device") == "cpu":
        del scoring["device"]  # the default, pinned as a configuration without the key
    return GateConfig(
        root=root,
        source=source,
        probes=tup(data["probes"]),
        template=data["template"],
        manifest=data["manifest"],
        grammar=data["grammar"],
        train=tup(data["train"]),
        test=data.get("test"),
        checkpoint=data.get("checkpoint"),
        loader=data.get("loader"),
        baseline=baseline,
        out=data["out"],
        scoring=ScoringConfig(**scoring),
        coverage=CoverageConfig(**{**cov, "adversarial_categories": tuple(cov["adversarial_categories"])}),
        leaks=LeakConfig(policy=leaks["policy"], detectors=tuple(leaks["detectors"]), window=leaks["window"]),
        gate=GateRules(**{**gate, "slices": tuple(gate["slices"])}),
        report=ReportConfig(**report),
        explicit_paths=tuple(str(Path(p) if Path(p).is_absolute() else root / p) for p in explicit),
        suites=suites,
    )
