"""`evalgate validate` shows the coverage matrix, not only "coverage: OK"; shortfalls are marked."""

from __future__ import annotations

import json

from helpers.probeset_factory import CONFIG, cli_merged, write_base


def test_the_matrix_is_shown_in_text_and_json_with_shortfalls_marked(tmp_path):
    cfg = write_base(tmp_path, {**CONFIG, "coverage": {**CONFIG["coverage"], "per_tense": 3}})
    code, out = cli_merged("validate", "--config", str(cfg))
    assert code == 2
    table = out[out.index("coverage (cells outside their bounds are marked):") :]
    rows = {tuple(line.split()[:2]): line.split() for line in table.splitlines()[3:] if line.strip()}
    assert rows[("tense", "future")][2:] == ["2", "3", "SHORT"]
    assert rows[("language", "en")][2:] == ["4", "2", "ok"]

    code, out = cli_merged("validate", "--config", str(cfg), "--format", "json")
    cells = json.loads(out)["summary"]["coverage"]
    future = next(c for c in cells if (c["family"], c["cell"]) == ("tense", "future"))
    assert future == {"family": "tense", "cell": "future", "n": 2, "min": 3, "max": None, "status": "SHORT"}
    assert {c["family"] for c in cells} >= {"language", "regularity", "tense", "person", "adversarial"}


def test_report_md_shows_the_matrix_with_shortfalls_marked(tmp_path):
    from evalgate.config import load_config
    from evalgate.gate.results import assemble_refused
    from evalgate.probeset_io import validate
    from evalgate.report.full_report import render_report

    cfg = write_base(tmp_path, {**CONFIG, "coverage": {**CONFIG["coverage"], "per_tense": 3}})
    outcome = validate(load_config(str(cfg)))
    # a refusal as `evalgate run` writes it: the report reads the keys the schema requires
    results = assemble_refused(reasons=[], findings=[], inputs={}, config_pin={}, probe_set=outcome.probe_set)
    text = render_report(results)
    section = text[text.index("### Coverage matrix") :]
    assert "cell(s) outside their bounds" in section
    assert "| tense                | future          |        2 |     3 |       | **SHORT** |" in section
