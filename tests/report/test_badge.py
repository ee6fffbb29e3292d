"""badge.json (shields.io endpoint schema) and badge.svg."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from helpers.report_factories import fake_run, no_baseline_run, refused_run

from evalgate.report.badge import badge_json, badge_svg

SVG = "{http://www.w3.org/2000/svg}"


@pytest.mark.integration
@pytest.mark.parametrize(
    ("build", "message", "color"),
    [
        (no_baseline_run, "pass · 77.9%", "green"),
        (fake_run, "fail · 68.3%", "red"),
        (refused_run, "refused", "lightgrey"),
    ],
)
def test_endpoint_json(build, message, color):
    badge = badge_json(build())
    # https://shields.io/badges/endpoint-badge: schemaVersion 1 and string label/message/color
    assert badge == {"schemaVersion": 1, "label": "evalgate", "message": message, "color": color}
    assert json.loads(json.dumps(badge)) == badge


def test_svg_is_valid_deterministic_and_says_the_same():
    results = fake_run()
    svg = badge_svg(results)
    assert svg == badge_svg(fake_run())
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg" and root.get("height") == "20"
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert texts == ["evalgate", "evalgate", "fail · 68.3%", "fail · 68.3%"]
    assert root.find(f"{SVG}title").text == "evalgate: fail · 68.3%"
    fills = {r.get("fill"): int(r.get("width")) for r in root.iter(f"{SVG}rect")}
    assert int(root.get("width")) == fills["#555"] + fills["#e05d44"]  # label half + red message half
    assert fills["#e05d44"] > fills["#555"]  # the longer text gets the wider half


def test_svg_escapes_its_text():
    svg = badge_svg({"verdict": "<b>&", "slices": {}})
    ET.fromstring(svg)  # still well-formed
    assert "<b>" not in svg and "&lt;b&gt;&amp;" in svg
