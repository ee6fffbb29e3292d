"""The sticky comment against a second, pickier stand-in GitHub (helpers/github_standin.py).

GitHub Enterprise path prefix, capped per_page, `Link` headers with rel last and extra parameters,
redirects, dropped connections, rate limits in both shapes, 404/422, fork tokens, deleted users and
CRLF bodies; driven through the library, `evalgate comment`, `evalgate run --comment` and
`python -m evalgate.github.action`. Invariants: one sticky comment per PR whatever happens, nobody
else's comment edited, the gate's exit code kept, the report never lost, the token only ever sent
to the API's host.
"""

from __future__ import annotations

import email.utils
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import paths
from helpers.github_standin import BOT, PREFIX, Elsewhere, HostileGitHub

from evalgate.cli import main
from evalgate.errors import GitHubError
from evalgate.gate.results import assemble_refused
from evalgate.github.sticky import MARKER_PREFIX, post_or_update_comment

GH_REPO = "acme/models"
PR = 31
SHA = "5e" * 20
MARK = f"{MARKER_PREFIX} verdict=pass -->"


def report(text: str) -> str:
    return f"## ✅ evalgate: pass\n\n{text}\n\n{MARK}\n"


@pytest.fixture
def api(monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,127.0.0.2,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,127.0.0.2,localhost")
    monkeypatch.delenv("EVALGATE_COMMENT_AUTHOR", raising=False)
    servers: list[HostileGitHub] = []

    def make(**kw) -> HostileGitHub:
        servers.append(HostileGitHub(repo=GH_REPO, **kw).start())
        return servers[-1]

    yield make
    for server in servers:
        server.stop()


@pytest.fixture
def elsewhere():
    other = Elsewhere()
    yield other
    other.stop()


def post(gh: HostileGitHub, body: str, token: str = "ghs-install", waits=None, **kw):
    waits = [] if waits is None else waits
    return post_or_update_comment(
        GH_REPO, PR, body, token=token, api_url=gh.url, env={}, sleep=waits.append, backoff_base=0.25, **kw
    )


def crowd(gh: HostileGitHub, n: int) -> None:
    """Other people's comments: deleted users, CRLF bodies, one quoting our marker at its start."""
    for i in range(n):
        login = None if i % 5 == 0 else f"user{i % 3}"
        gh.add(PR, login, f"{MARK}\r\nquoted by someone" if i == 3 else f"looks good\r\n{i}")


def others(gh: HostileGitHub) -> list[tuple[int, str]]:
    return [(c["id"], c["body"]) for c in gh.comments.get(PR, []) if (c["user"] or {}).get("login") != BOT]


def only_api_host(gh: HostileGitHub) -> None:
    assert gh.seen and all(s.path.startswith(PREFIX + "/") for s in gh.seen)


@pytest.mark.parametrize("rel_last", [False, True])
def test_enterprise_prefix_capped_pages_and_odd_link_headers(api, rel_last):
    gh = api(rel_last=rel_last, page_cap=5)
    crowd(gh, 23)
    ours = gh.add(PR, BOT, report("from yesterday"))  # on page 5 of 6 at 5 per page
    crowd(gh, 4)
    before = others(gh)

    actions = [post(gh, report(f"run {i}")).action for i in range(3)]

    assert actions == ["updated"] * 3
    (mine,) = gh.by(PR, BOT)
    assert mine["id"] == ours and "run 2" in mine["body"]
    assert not gh.calls("POST")
    assert any("page=6" in s.path for s in gh.calls("GET", "/comments"))  # read to the last page
    assert others(gh) == before and sum(MARK in body for _, body in before) == 2  # quoting ones untouched
    only_api_host(gh)


def test_comments_by_deleted_users_and_crlf_bodies_are_skipped_then_one_is_created(api):
    gh = api()
    crowd(gh, 12)
    assert [post(gh, report(f"run {i}")).action for i in range(3)] == ["created", "updated", "updated"]
    assert len(gh.by(PR, BOT)) == 1 and len(gh.calls("POST")) == 1


def test_several_of_ours_the_oldest_is_edited_and_none_created(api):
    gh = api()
    old = gh.add(PR, BOT, f"{MARK}\r\nmarker first, an older evalgate")
    crowd(gh, 9)
    newer = gh.add(PR, BOT, report("newer"))
    result = post(gh, report("now"))
    assert (result.action, result.comment_id) == ("updated", old)
    assert "now" in gh.by(PR, BOT)[0]["body"] and gh.by(PR, BOT)[1]["id"] == newer
    assert not gh.calls("POST")


def test_user_endpoint_decides_whose_comment_is_ours(api):
    gh = api()
    bot = gh.add(PR, BOT, report("bot"))
    result = post(gh, report("pat"), token="ghp-pat-dana")  # GET /user: 200 dana
    assert result.action == "created" and gh.by(PR, BOT)[0]["id"] == bot
    assert post(gh, report("install")).comment_id == bot  # GET /user: 403 -> github-actions[bot]
    assert post(gh, report("pat again"), token="ghp-pat-dana").comment_id == result.comment_id
    assert len(gh.comments[PR]) == 2


def test_rate_limits_primary_429_seconds_and_429_http_date(api):
    gh = api()
    now = 1_700_000_000.0
    gh.script(
        "GET",
        "/comments",
        403,
        headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(now) + 9)},
        body={"message": "API rate limit exceeded"},
    )
    gh.script("POST", "/comments", 429, headers={"Retry-After": "4"})
    gh.script("GET", "/comments", 429, headers={"Retry-After": email.utils.formatdate(now + 12, usegmt=True)})
    waits: list[float] = []
    result = post(gh, report("x"), waits=waits, clock=lambda: now)
    assert result.action == "created" and waits == [9.0, 12.0, 4.0]
    assert len(gh.by(PR, BOT)) == 1


def test_bad_gateways_then_success(api):
    gh = api()
    gh.add(PR, BOT, report("old"))
    gh.script("GET", "/comments", 502, body=None)
    gh.script("PATCH", "/issues/comments/", 503, body={"message": "unavailable"})
    waits: list[float] = []
    assert post(gh, report("new"), waits=waits).action == "updated"
    assert waits == [0.25, 0.25] and len(gh.by(PR, BOT)) == 1


def test_dropped_connections_are_retried(api):
    gh = api()
    gh.script("GET", "/comments", 0, reset=True)
    gh.script("GET", "/comments", 0, partial=True)  # headers, half a body, then gone
    gh.script("POST", "/comments", 0, reset=True, apply=True)  # created, the answer lost
    waits: list[float] = []
    result = post(gh, report("x"), waits=waits)
    assert result.action == "updated" and len(gh.by(PR, BOT)) == 1
    assert len(waits) == 3 and len(gh.calls("POST")) == 1


@pytest.mark.parametrize(("method", "status"), [("GET", 301), ("POST", 301), ("POST", 307), ("PATCH", 308)])
def test_a_moved_repository_is_followed_on_the_same_host(api, method, status):
    gh = api()
    if method == "PATCH":
        gh.add(PR, BOT, report("old"))
    route = "/issues/comments/" if method == "PATCH" else f"/issues/{PR}/comments"
    moved = "/repositories/777" + (
        f"/issues/comments/{gh._next_id}" if method == "PATCH" else f"/issues/{PR}/comments"
    )
    gh.script(method, route, status, headers={"Location": gh.url + moved})
    result = post(gh, report("x"))
    assert result.action == ("updated" if method == "PATCH" else "created")
    (mine,) = gh.by(PR, BOT)
    assert "\nx\n" in mine["body"]
    assert gh.calls(method, "/repositories/777/")[0].body == (
        None if method == "GET" else {"body": mine["body"]}
    )


def test_a_redirect_to_another_host_never_gets_the_token(api, elsewhere):
    gh = api()
    gh.script("GET", "/comments", 301, headers={"Location": elsewhere.url + "/steal?per_page=100"})
    with pytest.raises(GitHubError, match="another host") as info:
        post(gh, report("x"))
    assert elsewhere.seen == [] and "GITHUB_API_URL" in (info.value.hint or "")
    assert not gh.calls("POST")


def test_a_relative_redirect_and_a_relative_next_link_stay_on_the_api(api):
    gh = api(page_cap=3)
    crowd(gh, 7)
    mine = gh.add(PR, BOT, report("old"))
    gh.script(
        "GET",
        f"/issues/{PR}/comments",
        302,
        headers={"Location": f"{PREFIX}/repositories/777/issues/{PR}/comments?per_page=3"},
    )
    assert post(gh, report("new")).comment_id == mine
    only_api_host(gh)


def test_a_deleted_pr_is_a_clear_error(api):
    gh = api()
    gh.deleted_prs.add(PR)
    with pytest.raises(GitHubError, match="HTTP 404") as info:
        post(gh, report("x"))
    assert "pull request number" in (info.value.hint or "")


def test_a_body_over_the_limit_is_cut_before_github_refuses_it(api):
    gh = api()
    body = report("| probe | 🧪 |\n" * 9000)
    assert post(gh, body).truncated
    (mine,) = gh.by(PR, BOT)
    assert len(mine["body"]) <= 65536 and mine["body"].rstrip().endswith(MARK)


# -- through the commands ------------------------------------------------------------------------


MARK_REFUSED = "<!-- evalgate:report verdict=refused -->"


def refused_results(*reasons: str) -> dict:
    return assemble_refused(reasons=["x", *reasons], findings=[], inputs={}, config_pin={})


def refused_project(tmp_path: Path) -> None:
    """A project whose probe set is refused: `evalgate run` exits 2 without loading a model."""
    (tmp_path / "evalgate.yml").write_text("probes: [bad.jsonl]\n", encoding="utf-8")
    (tmp_path / "bad.jsonl").write_text('{"id": "@team|#1 <b>x</b>"\n', encoding="utf-8")


def github_env(gh: HostileGitHub, tmp_path: Path, token: str = "ghs-install") -> dict[str, str]:
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps(
            {"action": "synchronize", "number": PR, "pull_request": {"number": PR, "head": {"sha": SHA}}}
        ),
        encoding="utf-8",
    )
    return {
        "GITHUB_API_URL": gh.url,
        "GITHUB_TOKEN": token,
        "GITHUB_REPOSITORY": GH_REPO,
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
    }


@pytest.mark.parametrize("token", ["ghs-install", "ghs-fork"])
def test_run_comment_keeps_the_exit_code_and_loses_nothing(api, tmp_path, monkeypatch, token):
    gh = api()
    refused_project(tmp_path)
    for key, value in github_env(gh, tmp_path, token).items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)
    for _ in range(2):
        assert main(["run", "--config", "evalgate.yml", "--out", "out", "--comment"]) == 2
    text = (tmp_path / "out" / "REPORT.md").read_text(encoding="utf-8")
    if token == "ghs-install":
        (mine,) = gh.by(PR, BOT)  # the one-screen comment; the full report stays in REPORT.md
        assert "## ⛔ evalgate: refused" in mine["body"] and mine["body"].rstrip().endswith(MARK_REFUSED)
        assert len(mine["body"]) < len(text)
    else:
        assert gh.comments.get(PR, []) == []
        assert text.rstrip() in (tmp_path / "summary.md").read_text(encoding="utf-8")
    only_api_host(gh)


@pytest.mark.parametrize(
    "fault",
    [
        {"method": "GET", "path_re": "/comments", "status": 404},
        {"method": "POST", "path_re": "/comments", "status": 422, "body": {"message": "Validation Failed"}},
        {"method": "POST", "path_re": "/comments", "status": 201, "body": {"ok": True}},  # not a comment
        {"method": "GET", "path_re": "/comments", "status": 200, "body": {"not": "a list"}},
    ],
)
def test_run_comment_keeps_the_exit_code_whatever_github_answers(api, tmp_path, monkeypatch, capsys, fault):
    gh = api()
    refused_project(tmp_path)
    for key, value in github_env(gh, tmp_path).items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)
    gh.script(**fault)
    assert main(["run", "--config", "evalgate.yml", "--out", "out", "--comment"]) == 2
    err = capsys.readouterr().err
    assert "no PR comment" in err and "unexpected error" not in err
    assert (tmp_path / "out" / "REPORT.md").is_file()


def test_comment_command_answers_a_malformed_success_with_a_clear_error(api, tmp_path, monkeypatch, capsys):
    gh = api()
    folder = tmp_path / "artifact"
    folder.mkdir()
    (folder / "REPORT.md").write_text(report("hello @team"), encoding="utf-8")
    (folder / "results.json").write_text(json.dumps(refused_results()), encoding="utf-8")
    for key, value in github_env(gh, tmp_path).items():
        monkeypatch.setenv(key, value)
    gh.script("POST", "/comments", 200, body={"message": "<html>single sign-on</html>"})
    assert main(["comment", "--report", str(folder)]) == 3
    err = capsys.readouterr().err
    assert "unexpected error" not in err and "POST" in err


def test_comment_command_against_enterprise(api, tmp_path, monkeypatch, capsys):
    gh = api(page_cap=4, rel_last=True)
    crowd(gh, 10)
    folder = tmp_path / "artifact"
    folder.mkdir()
    (folder / "REPORT.md").write_text(report("ignored: never posted"), encoding="utf-8")
    (folder / "results.json").write_text(json.dumps(refused_results("cc @acme/reviewers")), encoding="utf-8")
    (folder / "head.json").write_text(json.dumps({"head_sha": SHA}), encoding="utf-8")
    env = github_env(gh, tmp_path)
    Path(env["GITHUB_EVENT_PATH"]).write_text(
        json.dumps({"workflow_run": {"head_sha": SHA}}), encoding="utf-8"
    )
    gh.pulls = [{"number": PR, "state": "open", "head": {"sha": SHA}}]
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    for _ in range(3):
        assert main(["comment", "--report", str(folder)]) == 0
    (mine,) = gh.by(PR, BOT)
    assert "@\u200bacme/reviewers" in mine["body"] and f"{GH_REPO}#{PR}" in capsys.readouterr().out
    assert "never posted" not in mine["body"]
    only_api_host(gh)


def test_the_action_entry_posts_once_and_keeps_everything(api, tmp_path):
    """`python -m evalgate.github.action`, as the container runs it, twice."""
    gh = api(page_cap=3)
    crowd(gh, 8)
    refused_project(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env.update(github_env(gh, tmp_path), NO_PROXY="127.0.0.1", no_proxy="127.0.0.1")
    env.update(INPUT_CONFIG="evalgate.yml", INPUT_COMMENT="true", INPUT_OUT="out")
    env.update({"INPUT_FAIL-ON-REGRESSION": "false"})
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-m", "evalgate.github.action"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 2, done.stderr
    text = (tmp_path / "out" / "REPORT.md").read_text(encoding="utf-8")
    (mine,) = gh.by(PR, BOT)
    assert "## ⛔ evalgate: refused" in mine["body"] and mine["body"].rstrip().endswith(MARK_REFUSED)
    assert text.rstrip() in (tmp_path / "summary.md").read_text(encoding="utf-8")
    output = (tmp_path / "output.txt").read_text(encoding="utf-8")
    assert "\nrefused\n" in output and "\nout/REPORT.md\n" in output
    only_api_host(gh)


@pytest.mark.parametrize("fence", ["````", "~~~~~", "```"])
def test_a_cut_inside_a_long_fence_closes_it_with_a_long_enough_fence(fence):
    """A fence that quotes shorter fences (the gate diff does) closes only with one as long."""
    from markdown_it import MarkdownIt

    from evalgate.github.sticky import fit_body

    quoted = "" if fence == "```" else " ``` <details>"
    inner = "\n".join(f"+ line {i}{quoted}" for i in range(9000))
    fold = f"<details><summary>diff</summary>\n\n{fence}diff\n{inner}\n{fence}\n\n</details>"
    body = f"# evalgate\n\n{fold}\n\nend\n\n{MARK}\n"
    cut, truncated = fit_body(body)
    assert truncated and len(cut.encode("utf-16-le")) // 2 <= 65536
    rendered = MarkdownIt("commonmark", {"html": True}).render(cut)
    code_blocks = "".join(re.findall(r"<pre>.*?</pre>", rendered, flags=re.S))
    assert "65,536-character limit" in rendered and "65,536" not in code_blocks
    assert rendered.rstrip().endswith(MARK) and "&lt;!--" not in rendered  # the marker is a real comment
    assert rendered.count("<details>") == 1 and rendered.count("</details>") == 1  # the fold is closed


@pytest.mark.parametrize("existing", [False, True])
def test_a_server_counting_bytes_gets_a_body_cut_to_fit(api, existing):
    gh = api(count_bytes=True)
    if existing:
        gh.add(PR, BOT, report("old"))
    body = report("| ñandú | 🧪 |\n" * 4000)  # under 65,536 characters, over 65,536 UTF-8 bytes
    assert len(body.encode("utf-16-le")) // 2 <= 65536 < len(body.encode("utf-8"))
    result = post(gh, body)
    assert result.truncated and result.action == ("updated" if existing else "created")
    (mine,) = gh.by(PR, BOT)
    assert len(mine["body"].encode("utf-8")) <= 65536 and mine["body"].rstrip().endswith(MARK)
    assert "65,536-character limit" in mine["body"]


def test_a_422_for_another_reason_is_not_retried(api):
    gh = api()
    gh.script("POST", "/comments", 422, body={"message": "Validation Failed"})
    with pytest.raises(GitHubError, match="HTTP 422") as info:
        post(gh, report("short"))
    assert "rejected" in (info.value.hint or "") and len(gh.calls("POST")) == 1


def test_the_action_entry_on_a_fork_token_puts_the_report_in_the_summary_once(api, tmp_path):
    gh = api()
    refused_project(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_"))}
    env.update(github_env(gh, tmp_path, "ghs-fork"), NO_PROXY="127.0.0.1", no_proxy="127.0.0.1")
    env.update(INPUT_CONFIG="evalgate.yml", INPUT_COMMENT="true", INPUT_OUT="out")
    done = subprocess.run(
        [sys.executable, "-m", "evalgate.github.action"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2, done.stderr
    report_text = (tmp_path / "out" / "REPORT.md").read_text(encoding="utf-8").rstrip()
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")
    assert summary.count(report_text) == 1 and "could not post the pull request comment" in summary
    assert gh.comments.get(PR, []) == []


@pytest.mark.parametrize("url", ["127.0.0.1:8080/api/v3", "ftp://example.test", "https://"])
def test_an_api_url_that_is_not_http_is_a_clear_error(tmp_path, monkeypatch, capsys, url):
    folder = tmp_path / "artifact"
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps(refused_results()), encoding="utf-8")
    monkeypatch.setenv("GITHUB_API_URL", url)
    monkeypatch.setenv("GITHUB_TOKEN", "ghs-install")
    assert main(["comment", "--report", str(folder), "--repo", GH_REPO, "--pr", "3"]) == 3
    err = capsys.readouterr().err
    assert "GITHUB_API_URL is not an http(s) URL" in err and "unexpected error" not in err


def test_the_action_passes_the_comment_author_to_its_comment_container():
    """An App token's bot cannot be found through GET /user: without the variable every run adds a comment."""
    import yaml

    action = yaml.safe_load((paths.REPO / "action.yml").read_text(encoding="utf-8"))
    comment_step = action["runs"]["steps"][2]
    assert "comment --report" in comment_step["run"] and "-e EVALGATE_COMMENT_AUTHOR" in comment_step["run"]


def test_an_app_token_with_its_author_named_edits_its_own_comment(api):
    gh = api()
    gh.add(PR, BOT, report("the default token's"))
    app = gh.add(PR, "my-app[bot]", report("the app's"))
    env = {"EVALGATE_COMMENT_AUTHOR": "my-app[bot]"}
    result = post_or_update_comment(GH_REPO, PR, report("x"), token="ghs-install", api_url=gh.url, env=env)
    assert (result.action, result.comment_id) == ("updated", app)
