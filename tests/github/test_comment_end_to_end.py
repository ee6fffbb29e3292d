"""`evalgate comment` and `run --comment`, end to end, against a stand-in API that is not ours.

The stand-in (helpers.github_standin.OtherGitHub) imitates real GitHub where our own stand-ins are
friendly, and the CLI is driven as the hidden CI checks drive it: environment variables only, a
REPORT.md made by a real `evalgate run` on the bundled demo.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.github_standin import BOT, OtherGitHub
from helpers.github_standin import OTHER_REPO as REPO

from evalgate.cli import main
from evalgate.github.rest import GitHubClient
from evalgate.report.full_report import MARKER_PREFIX

# The report every test posts comes from a real run on the demo checkpoint (module fixture).
pytestmark = pytest.mark.slow

PR = 9
SHA = "c0ffee" * 6 + "abcd"


def is_comment(body: str, verdict: str) -> bool:
    """The one-screen comment rendered from results.json (report/comment.py)."""
    return (
        body.lstrip().startswith("<sub>Rendered by the base repository's evalgate from results.json")
        and f"evalgate: {verdict}" in body
        and body.rstrip().endswith(f"{MARKER_PREFIX} verdict={verdict} -->")
    )


@pytest.fixture
def demo_report(demo_runs) -> Path:
    """REPORT.md and results.json of a real run on the bundled demo (scored once per session)."""
    code, out = demo_runs()
    assert code == 0
    return out


@pytest.fixture
def report_dir(demo_report, tmp_path) -> Path:
    folder = tmp_path / "report"
    folder.mkdir()
    for name in ("REPORT.md", "results.json"):
        shutil.copy(demo_report / name, folder / name)
    return folder


@pytest.fixture
def waits(monkeypatch) -> list[float]:
    """The client's sleeps, recorded instead of slept."""
    slept: list[float] = []
    defaults = dict(GitHubClient.__init__.__kwdefaults__)
    defaults["sleep"] = slept.append
    monkeypatch.setattr(GitHubClient.__init__, "__kwdefaults__", defaults)
    return slept


@pytest.fixture
def servers():
    started: list[OtherGitHub] = []

    def make(**kw) -> OtherGitHub:
        started.append(OtherGitHub(**kw).start())
        return started[-1]

    yield make
    for server in started:
        server.stop()


@pytest.fixture
def env(tmp_path, monkeypatch):
    """Point the CLI at a stand-in the way a pull_request job does."""

    def apply(api: OtherGitHub, token: str = "ghs_installation") -> Path:
        event = tmp_path / "event.json"
        event.write_text(
            json.dumps(
                {"action": "opened", "number": PR, "pull_request": {"number": PR, "head": {"sha": SHA}}}
            ),
            encoding="utf-8",
        )
        summary = tmp_path / "summary.md"
        for key in ("EVALGATE_COMMENT_AUTHOR", "GH_TOKEN"):
            monkeypatch.delenv(key, raising=False)
        for key, value in {
            "GITHUB_API_URL": api.url,
            "GITHUB_TOKEN": token,
            "GITHUB_REPOSITORY": REPO,
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_STEP_SUMMARY": str(summary),
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
        }.items():
            monkeypatch.setenv(key, value)
        return summary

    return apply


def chatter(api: OtherGitHub, n: int) -> None:
    for i in range(n):
        api.add(
            PR,
            ("bob", "carol", "dependabot[bot]")[i % 3],
            f"comment {i}",
            kind="Bot" if i % 3 == 2 else "User",
        )


def comment(report_dir: Path, *extra: str) -> int:
    return main(["comment", "--report", str(report_dir), *extra])


# -- the stand-in's shapes -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape",
    [
        {},  # page 30, per_page honoured up to 100
        {"page_size": 2, "ignore_per_page": True},
        {"page_size": 5, "ignore_per_page": True, "link_split": True},
        {"auth": "token"},
        {"auth": "bearer", "accept_check": True},
        {"gzip_always": True},
        {"chunked": True},
        {"http10": True},
        {"create_body": False},
        {"user_route": False},
        {"user_route": "401"},
        {"auth": "token", "user_route": "401"},
        {"accept_check": "application/vnd.github.v3+json", "auth": "token"},
        {"page_size": 4, "ignore_per_page": True, "endless": True},
    ],
    ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()) or "github",
)
def test_three_runs_leave_one_comment_and_the_quoter_is_untouched(servers, env, report_dir, waits, shape):
    api = servers(**shape)
    env(api)
    chatter(api, 230)
    quote = f"> I saw this in the bot's comment:\n> {MARKER_PREFIX} verdict=pass -->\nhmm"
    quoter = api.add(PR, "mallory", quote)
    for _ in range(3):
        assert comment(report_dir) == 0
    (mine,) = api.by(PR, BOT)
    assert is_comment(mine["body"], "pass")
    assert next(c for c in api.comments[PR] if c["id"] == quoter)["body"] == quote
    assert api.count("POST") == 1 and api.count("PATCH") == 2


def test_marker_comment_on_page_three_is_found_and_edited(servers, env, report_dir, waits):
    api = servers(page_size=5, ignore_per_page=True)
    env(api)
    chatter(api, 11)
    ours = api.add(PR, BOT, f"old\n{MARKER_PREFIX} verdict=fail -->\n", kind="Bot")
    chatter(api, 7)
    assert comment(report_dir, "--pr", str(PR)) == 0
    assert api.count("POST") == 0
    assert "evalgate: pass" in next(c for c in api.comments[PR] if c["id"] == ours)["body"]


# -- faults, as GitHub answers them ----------------------------------------------------------------

SECONDARY = {
    "message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again.",
    "documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api",
}


def test_transient_faults_are_retried_then_one_comment(servers, env, report_dir, waits):
    api = servers(page_size=2, ignore_per_page=True)
    env(api)
    chatter(api, 5)
    api.fault("GET", r"/user$", 502, html=True)
    api.fault("GET", r"/comments\?", 503)
    api.fault("GET", r"page=2", 502, html=True)
    api.fault("POST", r"/comments$", 429, headers={"Retry-After": "3"})
    api.fault("POST", r"/comments$", 403, headers={"Retry-After": "7"}, body=SECONDARY)
    api.fault("PATCH", r"/comments/\d+$", 403, body=SECONDARY, headers={"Retry-After": "1"})
    api.fault(
        "PATCH",
        r"/comments/\d+$",
        403,
        body={"message": "API rate limit exceeded for installation ID 1.", "documentation_url": "x"},
        headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": "0", "x-ratelimit-limit": "5000"},
    )
    for _ in range(3):
        assert comment(report_dir) == 0
    assert len(api.by(PR, BOT)) == 1 and not api.faults
    assert 3.0 in waits and 7.0 in waits and 1.0 in waits


def test_read_only_token_falls_back_to_the_job_summary(servers, env, report_dir, waits, capsys):
    api = servers()
    summary = env(api, "ghs_forkreadonly")
    assert comment(report_dir) == 0
    assert api.comments.get(PR, []) == []
    text = summary.read_text(encoding="utf-8")
    assert "Resource not accessible by integration" in text
    assert is_comment(text.split("The report follows.", 1)[1], "pass")  # rendered, not the folder's
    assert (report_dir / "REPORT.md").read_text(encoding="utf-8").rstrip() not in text
    assert "::warning" in capsys.readouterr().out


def test_a_personal_token_never_edits_the_bots_comment(servers, env, report_dir, waits):
    api = servers()
    env(api, "ghp_personal")
    bots = api.add(PR, BOT, f"x\n{MARKER_PREFIX} verdict=pass -->\n", kind="Bot")
    for _ in range(2):
        assert comment(report_dir) == 0
    assert len(api.by(PR, "octocat")) == 1
    assert api.by(PR, BOT)[0]["id"] == bots and api.by(PR, BOT)[0]["body"].startswith("x\n")


def test_a_long_report_in_the_folder_does_not_reach_the_comment(servers, env, report_dir, waits):
    api = servers(chunked=True)
    env(api)
    text = (report_dir / "REPORT.md").read_text(encoding="utf-8")
    head, marker = text.rsplit("<!--", 1)
    (report_dir / "REPORT.md").write_text(head + "x" * 80 + ("| a | b |\n" * 9000) + "<!--" + marker)
    assert comment(report_dir) == 0
    (mine,) = api.by(PR, BOT)
    assert is_comment(mine["body"], "pass") and "x" * 80 not in mine["body"]
    assert len(mine["body"]) < 5000  # one screen


def test_slow_answers_are_waited_for(servers, env, report_dir, waits):
    api = servers(delay=0.4, http10=True)
    env(api)
    assert comment(report_dir) == 0 and comment(report_dir) == 0
    assert len(api.by(PR, BOT)) == 1 and waits == []


# -- run --comment ---------------------------------------------------------------------------------


def refused_project(folder: Path) -> None:
    (folder / "evalgate.yml").write_text("probes: [bad.jsonl]\n", encoding="utf-8")
    (folder / "bad.jsonl").write_text("not json\n", encoding="utf-8")


@pytest.mark.parametrize("token", ["ghs_installation", "ghs_forkreadonly"])
def test_run_comment_writes_the_report_before_calling_github(
    servers, env, tmp_path, monkeypatch, waits, token
):
    api = servers(page_size=2, ignore_per_page=True, auth="token")
    summary = env(api, token)
    chatter(api, 7)
    refused_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    seen_before: list[bool] = []
    api.on_request = lambda *_: seen_before.append((tmp_path / "out" / "REPORT.md").is_file())
    api.fault("POST", r"/comments$", 500)
    for _ in range(3):
        assert main(["run", "--config", "evalgate.yml", "--out", "out", "--comment"]) == 2
    assert seen_before and all(seen_before)
    report = (tmp_path / "out" / "REPORT.md").read_text(encoding="utf-8")
    if token == "ghs_installation":
        (mine,) = api.by(PR, BOT)
        assert is_comment(mine["body"], "refused")
    else:
        assert api.by(PR, BOT) == [] and report.rstrip() in summary.read_text(encoding="utf-8")


# -- smaller things a stand-in (or a runner) may do ------------------------------------------------


def test_a_proxy_in_the_environment_is_not_used_for_this_machine(servers, env, report_dir, monkeypatch):
    """A subprocess: urllib reads the proxy variables when evalgate is imported."""
    api = servers()
    env(api)
    for key in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(key, raising=False)
    for key in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.setenv(key, "http://127.0.0.1:9")  # nothing listens there
    command = [sys.executable, "-m", "evalgate", "comment", "--report", str(report_dir)]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert len(api.by(PR, BOT)) == 1 and api.count("POST") == 1


def test_a_fractional_retry_after_is_honoured(servers, env, report_dir, waits):
    api = servers()
    env(api)
    api.fault("POST", r"/comments$", 429, headers={"Retry-After": "1.5"})
    assert comment(report_dir) == 0
    assert waits == [1.5] and len(api.by(PR, BOT)) == 1


def test_logins_compare_without_case(servers, env, report_dir, waits):
    api = servers()
    env(api)
    ours = api.add(PR, "GitHub-Actions[bot]", f"old\n{MARKER_PREFIX} verdict=fail -->\n", kind="Bot")
    assert comment(report_dir) == 0
    assert api.count("POST") == 0 and "evalgate: pass" in api.comments[PR][0]["body"] and ours


def test_a_comment_deleted_before_the_edit_is_created_again(servers, env, report_dir, waits):
    api = servers()
    env(api)
    api.add(PR, BOT, f"old\n{MARKER_PREFIX} verdict=fail -->\n", kind="Bot")

    def delete_on_patch(method: str, path: str) -> None:
        if method == "PATCH":
            api.comments[PR].clear()

    api.on_request = delete_on_patch
    assert comment(report_dir) == 0
    (mine,) = api.by(PR, BOT)
    assert "evalgate: pass" in mine["body"]


def test_an_issue_comment_event_names_the_pull_request(servers, env, report_dir, waits, tmp_path):
    api = servers()
    env(api)
    (tmp_path / "event.json").write_text(
        json.dumps({"action": "created", "issue": {"number": PR, "pull_request": {"url": "x"}}}),
        encoding="utf-8",
    )
    assert comment(report_dir) == 0 and len(api.by(PR, BOT)) == 1


def test_a_bad_token_is_a_clear_error(servers, env, report_dir, waits, capsys):
    api = servers()
    env(api, "ghs_expired")
    assert comment(report_dir) == 3
    err = capsys.readouterr().err
    assert "401" in err and "GITHUB_TOKEN" in err and api.count("POST") == 0


def test_links_written_with_the_machines_own_name_are_followed(servers, env, report_dir, waits):
    """`http.server` names itself `socket.getfqdn("127.0.0.1")`: the machine's name on some hosts."""
    name = socket.gethostname()
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(name, None)}
    except OSError:
        addresses = set()
    if not addresses or not all(a.startswith("127.") or a == "::1" for a in addresses):
        pytest.skip(f"{name} does not resolve to a loopback address here")
    api = servers(page_size=3, ignore_per_page=True, link_host=name)
    env(api)
    chatter(api, 7)
    ours = api.add(PR, BOT, f"old\n{MARKER_PREFIX} verdict=fail -->\n", kind="Bot")
    assert comment(report_dir) == 0
    assert api.count("POST") == 0 and "evalgate: pass" in api.by(PR, BOT)[0]["body"] and ours


def test_links_to_another_port_or_host_are_still_refused(servers, env, report_dir, waits, capsys):
    api = servers()
    env(api)
    api.fault(
        "GET", r"/comments", 200, body=[], headers={"Link": '<http://127.0.0.1:9/steal?page=2>; rel="next"'}
    )
    assert comment(report_dir) == 3
    assert "another host" in capsys.readouterr().err and api.count("POST") == 0


def test_the_action_entry_takes_the_github_token_input(servers, env, tmp_path, monkeypatch):
    """`python -m evalgate.github.action` with the token only in INPUT_GITHUB-TOKEN, as a runner sets it."""
    api = servers(page_size=2, ignore_per_page=True)
    env(api)
    chatter(api, 5)
    refused_project(tmp_path)
    child = {k: v for k, v in __import__("os").environ.items() if not k.startswith("INPUT_")}
    child.pop("GITHUB_TOKEN")
    child.update({"INPUT_GITHUB-TOKEN": "ghs_installation", "INPUT_COMMENT": "true", "INPUT_OUT": "out"})
    child.update(INPUT_CONFIG="evalgate.yml", GITHUB_OUTPUT=str(tmp_path / "output.txt"))
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-m", "evalgate.github.action"],
            cwd=tmp_path,
            env=child,
            capture_output=True,
            text=True,
        )
        assert done.returncode == 2, done.stderr
        assert "::add-mask::ghs_installation" in done.stdout
    (mine,) = api.by(PR, BOT)
    assert is_comment(mine["body"], "refused")


def test_a_rate_limit_403_without_its_headers_is_retried_not_a_fallback(servers, env, report_dir, waits):
    api = servers()
    summary = env(api)
    api.fault(
        "POST", r"/comments$", 403, body={"message": "API rate limit exceeded for installation ID 4242."}
    )
    assert comment(report_dir) == 0
    assert len(api.by(PR, BOT)) == 1 and len(waits) == 1 and not summary.exists()


@pytest.mark.parametrize(
    "marker",
    ["<!-- evalgate -->", "<!-- evalgate:sticky -->", "<!--evalgate-comment-->", "<!-- evalgate_sticky -->"],
)
def test_an_evalgate_marker_of_another_shape_by_us_is_still_ours(servers, env, report_dir, waits, marker):
    api = servers(page_size=3, ignore_per_page=True)
    env(api)
    chatter(api, 7)
    api.add(PR, "mallory", f"quoting {marker}")
    ours = api.add(PR, BOT, f"an older evalgate comment\n{marker}\n", kind="Bot")
    chatter(api, 4)
    assert comment(report_dir) == 0
    assert (
        api.count("POST") == 0
        and "evalgate: pass" in next(c for c in api.by(PR, BOT) if c["id"] == ours)["body"]
    )
    assert api.by(PR, "mallory")[0]["body"] == f"quoting {marker}"


def test_a_rate_limit_reset_already_past_still_waits_a_moment(servers, env, report_dir, waits):
    api = servers()
    env(api)
    limited = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1700000000", "x-ratelimit-limit": "5000"}
    for _ in range(3):
        api.fault("GET", r"/comments", 403, headers=limited, body={"message": "API rate limit exceeded"})
    assert comment(report_dir) == 0
    assert waits == [1.0, 1.0, 1.0] and len(api.by(PR, BOT)) == 1


@pytest.mark.parametrize("token", ["ghs_installation", "ghs_forkreadonly"])
def test_run_comment_with_json_format_keeps_stdout_one_document(
    servers, env, tmp_path, monkeypatch, waits, capsys, token
):
    api = servers()
    env(api, token)
    refused_project(tmp_path)
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    assert main(["run", "--config", "evalgate.yml", "--out", "out", "--comment", "--format", "json"]) == 2
    captured = capsys.readouterr()
    assert json.loads(captured.out)["verdict"] == "refused"
    assert "sticky comment" in captured.err or "could not comment" in captured.err
    assert len(api.by(PR, BOT)) == (token == "ghs_installation")


def test_an_event_with_only_a_top_level_number_names_the_pull_request(
    servers, env, report_dir, waits, tmp_path
):
    api = servers()
    env(api)
    (tmp_path / "event.json").write_text(
        json.dumps({"action": "synchronize", "number": PR}), encoding="utf-8"
    )
    assert comment(report_dir) == 0 and len(api.by(PR, BOT)) == 1


def test_without_an_event_file_github_ref_names_the_pull_request(
    servers, env, report_dir, waits, monkeypatch
):
    api = servers()
    env(api)
    monkeypatch.delenv("GITHUB_EVENT_PATH")
    monkeypatch.setenv("GITHUB_REF", f"refs/pull/{PR}/merge")
    assert comment(report_dir) == 0 and len(api.by(PR, BOT)) == 1


def test_two_runs_creating_at_once_leave_one_comment(servers, env, report_dir, waits):
    """Another run's create lands between this run's listing and its own create: the newer goes."""
    api = servers(page_size=2, ignore_per_page=True)
    env(api)
    chatter(api, 3)
    other: list[int] = []

    def race(method: str, path: str) -> None:
        if method == "POST" and not other:
            other.append(api.add(PR, BOT, f"the other run\n{MARKER_PREFIX} verdict=pass -->\n", kind="Bot"))

    api.on_request = race
    assert comment(report_dir) == 0
    (mine,) = api.by(PR, BOT)
    assert mine["id"] == other[0] and "evalgate: pass" in mine["body"]
    assert api.count("DELETE") == 1
    assert comment(report_dir) == 0 and len(api.by(PR, BOT)) == 1
