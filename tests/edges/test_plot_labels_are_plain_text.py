"""Text a pull request controls (here an ordinal probe's scale labels) is drawn as plain text:
matplotlib's math parser never sees a `$`, so a label like `$\\foo{$` cannot crash the report."""

from __future__ import annotations

import json

import pytest
from helpers.ordinal import ordinal_probe, run_results, scored

from evalgate.cli import main
from evalgate.edges.files import dump_json

LABELS = ("$\\undefinedcommand{$", "o$d^d$", "fine $x_$")


@pytest.mark.integration
def test_dollar_labels_render_as_text_through_compare(tmp_path, capsys):
    probe = ordinal_probe("ord-dollars", LABELS[2], candidates=LABELS)
    results = run_results(scored([(probe, [0.2, 0.3, 0.5])]))
    path = tmp_path / "results.json"
    path.write_text(dump_json(results), encoding="utf-8")
    code = main(["compare", str(path), str(path), "--out", str(tmp_path / "out"), "--config", "evalgate.yml"])
    err = capsys.readouterr().err
    assert code in (0, 1), err
    assert (tmp_path / "out" / "ordinal.png").read_bytes().startswith(b"\x89PNG")
    assert json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))["ordinal"]
