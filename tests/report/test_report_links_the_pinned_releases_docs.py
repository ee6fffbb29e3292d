"""Links in the report and the sticky comment point to evalgate's docs of the release that wrote
them (release.docs_url), not to `docs/...` paths, which a team's repository does not have (issue
27, section 2)."""

from __future__ import annotations

import json
import re

from helpers.paths import GOLDEN

from evalgate import release
from evalgate.report.comment import render_comment, render_no_verdict
from evalgate.report.full_report import render_report

# A docs page named in text, not as a link's text or inside its address.
BARE = re.compile(r"(?<![\[/\w])docs/[\w-]+\.md")


def _results(name: str) -> dict:
    return json.loads((GOLDEN / name).read_text(encoding="utf-8"))


def _links(text: str) -> list[str]:
    return re.findall(r"\]\((https?://[^)\s]+)\)", text)


def test_the_comment_of_a_failing_run_links_the_approval_docs_of_this_release():
    text = render_comment(_results("REPORT-fail.results.json"))
    assert not BARE.findall(text), BARE.findall(text)
    assert release.docs_url("docs/approval.md") in _links(text)


def test_a_comment_without_a_verdict_links_the_maintainer_setup_of_this_release():
    text = render_no_verdict({"head_sha": "ab" * 20}, "the pull request changes .github/", [".github/x.yml"])
    assert not BARE.findall(text), BARE.findall(text)
    assert release.docs_url("docs/security.md") + "#what-the-maintainer-must-configure" in _links(text)


def test_the_full_report_names_no_docs_page_but_by_a_link_to_this_release():
    for name in ("REPORT-fail", "REPORT-no-baseline", "REPORT-refused"):
        name += ".results.json"
        text = render_report(_results(name))
        assert not BARE.findall(text), (name, BARE.findall(text))
        assert all(u.startswith(release.docs_url("docs/")) for u in _links(text)), _links(text)
