"""The sticky PR comment against a real HTTP server standing in for the GitHub REST API."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.github_standin import PAGE_SIZE, FakeGitHub

from evalgate.cli import main
from evalgate.errors import GitHubError
from evalgate.gate.results import assemble_refused
from evalgate.github.report_comment import post_report
from evalgate.github.sticky import (
    BOT_LOGIN,
    MARKER_PREFIX,
    MAX_COMMENT_CHARS,
    GitHubClient,
    fit_body,
    post_or_update_comment,
)

GH_REPO = "octo/gate"
PR = 12
SHA = "ab" * 20


def report(text: str) -> str:
    return f"# evalgate: PASS\n\n{text}\n\n{MARKER_PREFIX} -->\n"


def post(gh: FakeGitHub, body: str, token: str = "ghs-installation", waits=None, **kw):
    waits = [] if waits is None else waits
    return post_or_update_comment(
        GH_REPO, PR, body, token=token, api_url=gh.url, env={}, sleep=waits.append, backoff_base=0.5, **kw
    )


def chatter(gh: FakeGitHub, n: int) -> None:
    for i in range(n):
        gh.add_comment(PR, "bob" if i % 2 else "carol", f"comment {i}")


def test_three_runs_leave_exactly_one_comment(gh):
    chatter(gh, 2 * PAGE_SIZE + 5)
    actions = [post(gh, report(f"run {i}")).action for i in range(3)]
    assert actions == ["created", "updated", "updated"]
    mine = gh.by(PR, BOT_LOGIN)
    assert len(mine) == 1 and "run 2" in mine[0]["body"]
    assert gh.count("POST") == 1 and gh.count("PATCH") == 2


def test_marker_comment_on_page_three_is_found_and_edited(gh):
    gh.add_comment(PR, "mallory", f"quoting you: {MARKER_PREFIX} -->")  # page 1, someone else's
    chatter(gh, 2 * PAGE_SIZE + 3)
    own = gh.add_comment(PR, BOT_LOGIN, report("old"))
    chatter(gh, 4)
    assert (len(gh.comments[PR]) - 1) // PAGE_SIZE + 1 == 3

    result = post(gh, report("new"))

    assert (result.action, result.comment_id) == ("updated", own)
    assert gh.count("GET", r"[?&]page=3$") == 1  # followed the Link header to the last page
    assert gh.count("POST") == 0
    assert "new" in gh.by(PR, BOT_LOGIN)[0]["body"]
    assert gh.by(PR, "mallory")[0]["body"] == f"quoting you: {MARKER_PREFIX} -->"


def test_someone_elses_marker_comment_is_never_touched(gh):
    theirs = gh.add_comment(PR, "mallory", report("fake pass"))
    result = post(gh, report("real"))
    assert result.action == "created" and result.comment_id != theirs
    assert gh.by(PR, "mallory")[0]["body"] == report("fake pass")
    assert gh.count("PATCH") == 0


def test_a_personal_token_edits_its_own_users_comment_only(gh):
    bot = gh.add_comment(PR, BOT_LOGIN, report("bot's"))
    alice = gh.add_comment(PR, "alice", report("alice's"))
    result = post(gh, report("from alice"), token="pat-alice")
    assert (result.action, result.comment_id) == ("updated", alice)
    assert gh.by(PR, BOT_LOGIN)[0]["id"] == bot and "bot's" in gh.by(PR, BOT_LOGIN)[0]["body"]


def test_the_author_can_be_configured_for_other_installation_tokens(gh):
    app = gh.add_comment(PR, "my-app[bot]", report("app"))  # not ours under the default author
    assert post(gh, report("x"), author=None).action == "created"
    result = post_or_update_comment(
        GH_REPO,
        PR,
        report("y"),
        token="ghs-installation",
        api_url=gh.url,
        env={"EVALGATE_COMMENT_AUTHOR": "my-app[bot]"},
    )
    assert (result.action, result.comment_id) == ("updated", app)


def test_server_errors_are_retried_with_backoff(gh):
    gh.fail("GET", r"/comments", 502)
    gh.fail("GET", r"/comments", 503)
    waits: list[float] = []
    assert post(gh, report("x"), waits=waits).action == "created"
    assert waits == [0.5, 1.0]  # exponential from backoff_base
    assert len(gh.by(PR, BOT_LOGIN)) == 1


def test_429_honours_retry_after(gh):
    gh.fail("POST", r"/comments", 429, headers={"Retry-After": "7"})
    waits: list[float] = []
    assert post(gh, report("x"), waits=waits).action == "created"
    assert waits == [7.0]


def test_secondary_rate_limit_403_is_retried_not_a_fallback(gh):
    msg = {
        "message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."
    }
    gh.fail("PATCH", r"/issues/comments/", 403, body=msg)
    gh.add_comment(PR, BOT_LOGIN, report("old"))
    waits: list[float] = []
    result = post(gh, report("new"), waits=waits, secondary_min_wait=3.0)
    assert result.action == "updated" and waits == [3.0]  # GitHub: wait at least a minute (here 3 s)


def test_primary_rate_limit_waits_until_reset(gh):
    gh.fail("GET", r"/comments", 403, headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1005"})
    waits: list[float] = []
    assert post(gh, report("x"), waits=waits, clock=lambda: 1000.0).action == "created"
    assert waits == [5.0]


def test_a_wait_beyond_the_cap_is_reported_not_slept(gh):
    gh.fail("GET", r"/comments", 429, headers={"Retry-After": "3600"})
    waits: list[float] = []
    with pytest.raises(GitHubError, match="3600"):
        post(gh, report("x"), waits=waits, max_wait=60)
    assert waits == []


def test_persistent_failure_gives_up_after_the_retries(gh):
    for _ in range(10):
        gh.fail("GET", r"/comments", 500)
    with pytest.raises(GitHubError, match="HTTP 500 after 3 attempt"):
        post(gh, report("x"), max_retries=2)
    assert gh.count("GET", "/comments") == 3


def test_a_create_whose_answer_was_lost_is_not_duplicated(gh):
    gh.fail("POST", r"/comments", 502, apply=True)  # created, but the client sees a 502
    waits: list[float] = []
    result = post(gh, report("x"), waits=waits)
    assert result.action == "updated" and len(gh.by(PR, BOT_LOGIN)) == 1
    assert gh.count("POST") == 1 and waits == [0.5]


def test_read_only_token_falls_back_without_raising(gh):
    result = post(gh, report("x"), token="ghs-readonly")
    assert result.fallback and "not accessible" in result.reason
    assert gh.comments.get(PR, []) == []


def test_an_over_long_body_is_cut_with_a_note_and_stays_sticky(gh):
    rows = "\n".join(f"| probe-{i:06d} | works | worked |" for i in range(4000))
    body = f"# evalgate\n\n<details><summary>all</summary>\n\n```\n{rows}\n```\n</details>\n\n"
    body += f"{MARKER_PREFIX} -->\n"
    assert len(body) > MAX_COMMENT_CHARS
    first = post(gh, body)
    posted = gh.by(PR, BOT_LOGIN)[0]["body"]
    assert first.truncated and len(posted) <= MAX_COMMENT_CHARS
    assert "65,536-character limit" in posted and posted.rstrip().endswith(f"{MARKER_PREFIX} -->")
    assert posted.count("```") % 2 == 0 and posted.count("<details") == posted.count("</details>")
    assert post(gh, body).action == "updated" and len(gh.by(PR, BOT_LOGIN)) == 1


def test_the_limit_counts_utf16_units_like_github():
    body = "\U0001f7e2" * 40000 + f"\n{MARKER_PREFIX} verdict=pass -->\n"  # 40,000 code points, 80,000 units
    cut, truncated = fit_body(body)
    assert truncated and len(cut.encode("utf-16-le")) // 2 <= MAX_COMMENT_CHARS
    assert cut.rstrip().endswith(f"{MARKER_PREFIX} verdict=pass -->")
    assert fit_body("short") == ("short", False)


def test_links_to_another_host_never_get_the_token(gh):
    gh.fail("GET", r"/comments", 200, body=[], headers={"Link": '<http://127.0.0.2:9/steal>; rel="next"'})
    with pytest.raises(GitHubError, match="another host"):
        post(gh, report("x"))


def test_find_pr_for_sha_same_repo_and_fork(gh):
    gh.pulls = [
        {"number": 3, "state": "closed", "head": {"sha": SHA}},
        {"number": 5, "state": "open", "head": {"sha": SHA}},
        {"number": 9, "state": "open", "head": {"sha": "cd" * 20}, "fork": True},
    ]
    client = GitHubClient("ghs-installation", gh.url)
    assert client.find_pr_for_sha(GH_REPO, SHA) == 5
    assert client.find_pr_for_sha(GH_REPO, "cd" * 20) == 9  # not in commits/{sha}/pulls: found by the scan
    assert client.find_pr_for_sha(GH_REPO, "ef" * 20) is None


# -- `evalgate comment` end to end -----------------------------------------------------------------


def results_doc() -> dict:
    """A results.json as the run pipeline writes it for a refused run (no model needed)."""
    return assemble_refused(
        reasons=["leak", "ping @octo-org/team and mail a@b.c"], findings=[], inputs={}, config_pin={}
    )


@pytest.fixture
def artifact(tmp_path) -> Path:
    folder = tmp_path / "artifact"
    folder.mkdir()
    (folder / "REPORT.md").write_text(report("ping @octo-org/team and mail a@b.c"), encoding="utf-8")
    (folder / "results.json").write_text(json.dumps(results_doc()), encoding="utf-8")
    (folder / "head.json").write_text(json.dumps({"head_sha": SHA}), encoding="utf-8")
    return folder


@pytest.fixture
def workflow_run_env(gh, tmp_path, monkeypatch):
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"workflow_run": {"head_sha": SHA, "pull_requests": []}}), encoding="utf-8")
    summary = tmp_path / "summary.md"
    for key, value in {
        "GITHUB_TOKEN": "ghs-installation",
        "GITHUB_REPOSITORY": GH_REPO,
        "GITHUB_API_URL": gh.url,
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_SHA": "ff" * 20,  # the default branch's tip in a workflow_run job: must not be used
        "GITHUB_STEP_SUMMARY": str(summary),
    }.items():
        monkeypatch.setenv(key, value)
    gh.pulls = [{"number": PR, "state": "open", "head": {"sha": SHA}, "fork": True}]
    return summary


def test_comment_command_end_to_end_from_a_fork_artifact(gh, artifact, workflow_run_env, capsys):
    assert main(["comment", "--report", str(artifact)]) == 0
    assert main(["comment", "--report", str(artifact)]) == 0
    (mine,) = gh.by(PR, BOT_LOGIN)
    assert "ping @\u200bocto-org/team" in mine["body"] and "mail a@" in mine["body"]  # no ping
    assert "# evalgate: PASS" not in mine["body"]  # the artifact's REPORT.md is never posted
    assert f"#{PR}" in capsys.readouterr().out


def test_comment_command_refuses_an_invalid_artifact(gh, artifact, workflow_run_env, capsys):
    (artifact / "results.json").write_text(json.dumps({"verdict": "pass"}), encoding="utf-8")
    assert main(["comment", "--report", str(artifact)]) == 2
    assert "not a valid evalgate results file" in capsys.readouterr().err
    assert gh.count("POST") == 0 and gh.count("GET") == 0


def test_comment_command_refuses_an_artifact_for_another_commit(gh, artifact, workflow_run_env, capsys):
    (artifact / "head.json").write_text(json.dumps({"head_sha": "cd" * 20}), encoding="utf-8")
    assert main(["comment", "--report", str(artifact)]) == 2
    assert "this run is for" in capsys.readouterr().err and gh.count("POST") == 0


def test_comment_command_refuses_a_symlinked_results_file(gh, artifact, workflow_run_env, tmp_path, capsys):
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps(results_doc()), encoding="utf-8")
    (artifact / "results.json").unlink()
    (artifact / "results.json").symlink_to(secret)
    assert main(["comment", "--report", str(artifact)]) == 2
    assert "symbolic link" in capsys.readouterr().err and gh.count("POST") == 0


def test_comment_command_skips_a_stale_head(gh, artifact, workflow_run_env, capsys):
    gh.pulls = [{"number": PR, "state": "open", "head": {"sha": "cd" * 20}}]  # the PR moved on
    (artifact / "head.json").unlink()
    assert main(["comment", "--report", str(artifact), "--sha", "ab" * 20]) == 0
    assert "nothing posted" in capsys.readouterr().out and gh.count("POST") == 0


def test_comment_command_read_only_token_writes_the_step_summary(gh, artifact, workflow_run_env, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "ghs-readonly")
    assert main(["comment", "--report", str(artifact), "--pr", str(PR)]) == 0
    summary = workflow_run_env.read_text(encoding="utf-8")
    assert "could not post the pull request comment" in summary and "evalgate: refused" in summary
    assert "# evalgate: PASS" not in summary  # the artifact's markdown reaches no summary either
    assert gh.comments.get(PR, []) == []


def test_post_report_for_run_never_raises(gh, artifact, tmp_path, capsys):
    env = {"GITHUB_TOKEN": "ghs-installation", "GITHUB_REPOSITORY": GH_REPO, "GITHUB_API_URL": gh.url}
    assert post_report(artifact, env=env) is None  # no PR to comment on: a warning only
    assert "no PR comment" in capsys.readouterr().err
    for _ in range(10):
        gh.fail("GET", r"/comments", 503)
    assert post_report(artifact, pr=PR, env=env, max_retries=1, sleep=lambda s: None) is None
    assert "HTTP 503" in capsys.readouterr().err
    assert post_report(tmp_path / "missing", pr=PR, env=env) is None


def test_comment_command_without_a_pr_or_token_is_a_usage_error(artifact, monkeypatch, capsys):
    for key in ("GITHUB_EVENT_PATH", "GITHUB_SHA", "GITHUB_TOKEN", "GH_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("GITHUB_REPOSITORY", GH_REPO)
    assert main(["comment", "--report", str(artifact), "--pr", "3"]) == 2
    assert "no GitHub token" in capsys.readouterr().err


def test_an_unreachable_api_is_retried_then_reported(gh):
    closed = gh.url
    gh.stop()  # nothing listens on that port any more
    waits: list[float] = []
    client = GitHubClient("ghs-installation", closed, max_retries=2, backoff_base=0.25, sleep=waits.append)
    with pytest.raises(GitHubError) as info:
        client.own_login({})
    assert waits == [0.25, 0.5] and "GITHUB_API_URL" in (info.value.hint or "")


@pytest.mark.parametrize(("token", "posted"), [("ghs-installation", True), ("ghs-readonly", False)])
def test_run_comment_keeps_the_gates_exit_code(gh, tmp_path, monkeypatch, token, posted):
    """`evalgate run --comment` on a refused probe set (no model needed): exit 2 either way."""
    (tmp_path / "evalgate.yml").write_text("probes: [bad.jsonl]\n", encoding="utf-8")
    (tmp_path / "bad.jsonl").write_text("not json\n", encoding="utf-8")
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"pull_request": {"number": PR, "head": {"sha": SHA}}}), encoding="utf-8")
    summary = tmp_path / "summary.md"
    for key, value in {
        "GITHUB_TOKEN": token,
        "GITHUB_REPOSITORY": GH_REPO,
        "GITHUB_API_URL": gh.url,
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_STEP_SUMMARY": str(summary),
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)
    code = main(["run", "--config", "evalgate.yml", "--out", "out", "--comment"])
    assert code == 2
    report_text = (tmp_path / "out" / "REPORT.md").read_text(encoding="utf-8")
    if posted:
        (mine,) = gh.by(PR, BOT_LOGIN)
        # The one-screen comment, rendered from results.json; REPORT.md stays the full report.
        assert "⛔ evalgate: refused" in mine["body"] and "verdict=refused" in mine["body"]
        assert len(mine["body"]) < len(report_text)
    else:
        assert gh.comments.get(PR, []) == []
        assert "could not post the pull request comment" in summary.read_text(encoding="utf-8")


def test_a_pull_request_that_is_not_found_is_refused_and_the_report_kept(
    gh, artifact, workflow_run_env, capsys
):
    gh.fail("GET", r"/issues/99/comments", 404)  # a wrong --pr, or a PR the token cannot see
    assert main(["comment", "--report", str(artifact), "--pr", "99"]) == 2
    err = capsys.readouterr().err
    assert f"{GH_REPO}#99: not found (HTTP 404)" in err and "job summary" in err
    # The comment that would have been posted goes to the summary: for a PR the API cannot show,
    # which files its run changed cannot be told either, so it carries no verdict.
    summary = workflow_run_env.read_text(encoding="utf-8")
    assert "evalgate: no verdict from this run" in summary and "evalgate: refused" not in summary
    assert gh.count("POST") == 0


def test_an_unwritable_step_summary_does_not_lose_the_gates_answer(
    gh, artifact, workflow_run_env, monkeypatch, tmp_path, capsys
):
    monkeypatch.setenv("GITHUB_TOKEN", "ghs-readonly")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "no-such-dir" / "summary.md"))
    assert main(["comment", "--report", str(artifact), "--pr", str(PR)]) == 0
    assert "the report stays in its folder" in capsys.readouterr().out


def test_a_stand_in_api_that_names_itself_localhost_in_links_is_followed(gh):
    chatter(gh, PAGE_SIZE + 3)
    mine = gh.add_comment(PR, BOT_LOGIN, report("old"))  # on page 2
    gh.url = gh.url.replace("127.0.0.1", "localhost")  # the links it writes; the client uses 127.0.0.1
    result = post_or_update_comment(
        GH_REPO,
        PR,
        report("new"),
        token="ghs-installation",
        api_url=gh.url.replace("localhost", "127.0.0.1"),
        env={},
    )
    assert result.action == "updated" and [c["id"] for c in gh.by(PR, BOT_LOGIN)] == [mine]
    assert gh.count("GET", "page=2") == 1
