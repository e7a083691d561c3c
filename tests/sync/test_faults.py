"""Issue 30, "Bad input and faults", each by a real round on a bare hub and three clones:
a push rejected every time gives up after a bounded number of attempts, a round killed at
each step is finished by the next, a note whose frontmatter does not parse on one side is
line-merged with markers, kept and reported, and the machines' clocks decide nothing."""

from __future__ import annotations

import http.server
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from shardpy.merge.frontmatter import split_frontmatter
from shardpy.sync.round import PUSH_ATTEMPTS
from shardpy.yamlsafe import load
from tests.gitsync.kit import git
from tests.shardkit import run_shardpy
from tests.sync.kit import MACHINES, Fleet

NOTE = "---\ntitle: Plan\nstatus: draft\ntags: [work]\n---\n# Plan\n\none\ntwo\nthree\n"


def _status(text: str) -> object:
    fm, _ = split_frontmatter(text)
    assert fm is not None
    data = load(fm.inner)
    assert isinstance(data, dict)
    return data["status"]


def test_a_push_rejected_every_time_gives_up_after_a_bounded_number_of_attempts(fleet: Fleet) -> None:
    fleet.start({"notes/plan.md": NOTE})
    b = fleet.machines["b"]
    races = fleet.race_pushes("b", "c", once=False)  # every push b tries, c pushes first
    fleet.write("b", "notes/plan.md", NOTE + "four\n")
    report = fleet.sync("b", exit_code=1)  # a remote's part of the round failed: exit 1
    remote = report["remotes"][0]
    assert remote["status"] == "error" and "rejected" in remote["error"]
    assert remote["code"] == "SYNC_PUSH_REJECTED" and remote["hint"]
    assert remote["pushed"] is False
    assert races.read_text().count("x") == PUSH_ATTEMPTS
    # Each rejection was followed by a merge of what c pushed; nothing is left mid-merge.
    assert (b / "notes/race.md").read_text().count("race") == PUSH_ATTEMPTS
    assert not (b / ".git/MERGE_HEAD").exists() and fleet.clean("b")
    (b / ".git/hooks/pre-push").unlink()
    fleet.settle()
    assert "four" in fleet.read("a", "notes/plan.md")


def test_a_remote_that_refuses_the_push_is_an_error_in_its_words_not_a_race(fleet: Fleet) -> None:
    """The seed's disk full (its unpacker fails) or a hook saying no: git reports
    `[remote rejected]`. That is not another machine pushing first, so no fetch-merge-retry
    loop ending in "others keep pushing": one SYNC_PUSH_REFUSED carrying the remote's words."""
    fleet.start({"notes/plan.md": NOTE})
    hook = fleet.hub / "hooks/pre-receive"
    hook.write_text("#!/bin/sh\necho 'fatal: No space left on device' >&2\nexit 1\n", encoding="utf-8")
    hook.chmod(0o755)
    fleet.write("b", "notes/plan.md", NOTE + "four\n")
    remote = fleet.sync("b", exit_code=1)["remotes"][0]
    assert (remote["status"], remote["code"], remote["pushed"]) == ("error", "SYNC_PUSH_REFUSED", False)
    assert "No space left on device" in remote["error"] and "space on the remote" in remote["hint"]
    hook.unlink()
    assert fleet.sync("b")["remotes"][0]["pushed"] is True


def test_a_remote_writes_no_escape_sequence_into_this_machines_terminal(fleet: Fleet) -> None:
    """git passes a hook's output through (`remote: ...`, control characters and all) and the
    refused push quotes it: a seed's hook could retitle the terminal or recolour it. The report
    keeps its words, without their control characters."""
    fleet.start({"notes/plan.md": NOTE})
    hook = fleet.hub / "hooks/pre-receive"
    hook.write_text("#!/bin/sh\nprintf 'no \\033]0;pwned\\007\\033[31mway\\033[0m\\n' >&2\nexit 1\n")
    hook.chmod(0o755)
    b = fleet.machines["b"]
    fleet.write("b", "notes/plan.md", NOTE + "four\n")
    text = run_shardpy("sync", cwd=b)
    assert text.returncode == 1 and "refused the push" in text.stdout, text.stdout + text.stderr
    assert not any(c in text.stdout for c in "\x1b\x07"), repr(text.stdout)
    remote = fleet.sync("b", exit_code=1)["remotes"][0]
    assert remote["code"] == "SYNC_PUSH_REFUSED" and "way" in remote["error"]
    assert not any(c in remote["error"] for c in "\x1b\x07"), repr(remote["error"])


class _Unauthorized(http.server.BaseHTTPRequestHandler):
    """A git host on 127.0.0.1 that takes no credentials: 401 to everything."""

    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="vault"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_POST = do_GET

    def log_message(self, format: str, *args: object) -> None:
        pass


class _Missing(_Unauthorized):
    """A git host on 127.0.0.1 without the repository: 404, in GitHub's words."""

    def do_GET(self) -> None:
        body = b"Repository not found."
        self.send_response(404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET


def _host(handler: type[http.server.BaseHTTPRequestHandler]) -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/vault.git"
    server.shutdown()


@pytest.fixture
def locked_host() -> Iterator[str]:
    yield from _host(_Unauthorized)


class _Forbidden(_Unauthorized):
    """A git host on 127.0.0.1 that knows the account and does not allow it: 403."""

    def do_GET(self) -> None:
        self.send_response(403)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_POST = do_GET


@pytest.fixture
def missing_host() -> Iterator[str]:
    yield from _host(_Missing)


@pytest.fixture
def forbidding_host() -> Iterator[str]:
    yield from _host(_Forbidden)


def test_a_host_that_forbids_this_account_is_an_auth_error(fleet: Fleet, forbidding_host: str) -> None:
    fleet.start({"notes/plan.md": NOTE})
    fleet.shardpy("a", "sync", "add-remote", "locked", forbidding_host)
    by_name = {r["name"]: r for r in fleet.sync("a", exit_code=1)["remotes"]}
    assert (by_name["locked"]["status"], by_name["locked"]["code"]) == ("error", "SYNC_REMOTE_AUTH")


def test_a_repository_the_host_says_is_not_there_is_an_error(fleet: Fleet, missing_host: str) -> None:
    """A wrong address on a hosting site (or a repository this account may not see) is never fixed
    by waiting: it was "unreachable", exit 0, tried for ever. A missing folder stays unreachable
    (a seed on a drive not mounted yet)."""
    fleet.start({"notes/plan.md": NOTE})
    fleet.shardpy("a", "sync", "add-remote", "typo", missing_host)
    fleet.shardpy("a", "sync", "add-remote", "usb", str(fleet.root / "unmounted/seed.git"))
    by_name = {r["name"]: r for r in fleet.sync("a", exit_code=1)["remotes"]}
    assert (by_name["typo"]["status"], by_name["typo"]["code"]) == ("error", "SYNC_REMOTE_NOT_FOUND")
    assert "git remote -v" in by_name["typo"]["hint"]
    assert by_name["usb"]["status"] == "unreachable" and by_name["origin"]["status"] == "ok"


def test_credentials_the_remote_refuses_are_an_error_never_a_prompt_or_unreachable(
    fleet: Fleet, locked_host: str
) -> None:
    """A remote that wants a password: sync never prompts, and it is not "unreachable" (exit 0,
    tried again for ever) but SYNC_REMOTE_AUTH with exit 1; the other remote still syncs."""
    fleet.start({"notes/plan.md": NOTE})
    fleet.shardpy("a", "sync", "add-remote", "locked", locked_host)
    fleet.write("a", "notes/plan.md", NOTE + "four\n")
    by_name = {r["name"]: r for r in fleet.sync("a", exit_code=1)["remotes"]}
    assert (by_name["locked"]["status"], by_name["locked"]["code"]) == ("error", "SYNC_REMOTE_AUTH")
    assert "terminal prompts disabled" in by_name["locked"]["error"]
    assert by_name["origin"]["pushed"] is True


# An ssh as OpenSSH asks for a passphrase or a host key: through $SSH_ASKPASS when
# SSH_ASKPASS_REQUIRE is "force", else on the terminal itself (here: waits for an answer).
FAKE_SSH = """#!/bin/sh
echo "$SSH_ASKPASS_REQUIRE $SSH_ASKPASS" >> "$(dirname "$0")/asked"
if [ "$SSH_ASKPASS_REQUIRE" = force ] && [ -n "$SSH_ASKPASS" ]; then
  "$SSH_ASKPASS" "Enter passphrase for key '/home/me/.ssh/id_ed25519':" >/dev/null || {
    echo "me@example.invalid: Permission denied (publickey)." >&2; exit 255; }
fi
sleep 60
"""


def test_ssh_never_waits_on_a_question(fleet: Fleet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ssh asks for a passphrase or to trust a host on the terminal, past GIT_TERMINAL_PROMPT: a
    watcher in a terminal's background stopped there for good. ssh is told to ask the askpass
    program, which answers no: SYNC_REMOTE_AUTH at once, the other remote synced."""
    fleet.start({"notes/plan.md": NOTE})
    ssh = tmp_path / "bin/ssh"
    ssh.parent.mkdir()
    ssh.write_text(FAKE_SSH, encoding="utf-8")
    ssh.chmod(0o755)
    monkeypatch.setenv("GIT_SSH_COMMAND", str(ssh))
    monkeypatch.delenv("SSH_ASKPASS", raising=False)
    monkeypatch.delenv("SSH_ASKPASS_REQUIRE", raising=False)
    fleet.shardpy("a", "sync", "add-remote", "server", "ssh://me@example.invalid/vault.git")
    fleet.write("a", "notes/plan.md", NOTE + "four\n")
    started = time.monotonic()
    by_name = {r["name"]: r for r in fleet.sync("a", exit_code=1)["remotes"]}
    assert time.monotonic() - started < 50  # not the fake's minute of waiting for an answer
    assert (by_name["server"]["status"], by_name["server"]["code"]) == ("error", "SYNC_REMOTE_AUTH")
    assert by_name["origin"]["pushed"] is True
    asked = (ssh.parent / "asked").read_text(encoding="utf-8").split()
    assert asked[0] == "force" and Path(asked[1]).name == "false"


@pytest.mark.parametrize("point", ["committed", "merging"])
def test_a_round_killed_at_each_step_is_finished_by_the_next(fleet: Fleet, point: str) -> None:
    fleet.start({"notes/plan.md": NOTE})
    fleet.write("a", "notes/plan.md", NOTE.replace("two", "two on a"))
    fleet.sync("a")
    fleet.write("b", "notes/plan.md", NOTE.replace("three", "three on b"))
    b = fleet.machines["b"]
    killed = run_shardpy("sync", "--json", cwd=b, env={"SHARDPY_TEST_SYNC_FAULT": point})
    assert killed.returncode == -signal.SIGKILL
    report = fleet.sync("b")  # the lock is free (a flock dies with its process) and the round finishes
    assert report["remotes"][0]["status"] == "ok" and report["remotes"][0]["pushed"] is True
    if point == "merging":
        assert report["recovered"] == ["undid the interrupted merge of refs/remotes/origin/main"]
    assert not (b / ".git/MERGE_HEAD").exists() and fleet.clean("b")
    assert git(b, "config", "shardpy-sync.merging", ok=False).returncode != 0
    fleet.settle()
    for m in MACHINES:
        text = fleet.read(m, "notes/plan.md")
        assert "two on a" in text and "three on b" in text


def test_ctrl_c_mid_merge_undoes_the_merge_at_once_and_says_what_is_kept(fleet: Fleet) -> None:
    """Ctrl-C is not a kill: the round's unfinished merge is undone before the command ends, and
    the message says so (a commit the round made is kept: not "every change was rolled back")."""
    fleet.start({"notes/plan.md": NOTE})
    fleet.write("a", "notes/plan.md", NOTE.replace("two", "two on a"))
    fleet.sync("a")
    fleet.write("b", "notes/plan.md", NOTE.replace("three", "three on b"))
    b = fleet.machines["b"]
    stopped = run_shardpy("sync", "--json", cwd=b, env={"SHARDPY_TEST_SYNC_FAULT": "merging:int"})
    assert stopped.returncode == 130 and "Traceback" not in stopped.stderr
    assert "Undid the interrupted merge" in stopped.stderr and "rolled back" not in stopped.stderr
    assert not (b / ".git/MERGE_HEAD").exists() and fleet.clean("b")
    assert git(b, "config", "shardpy-sync.merging", ok=False).returncode != 0
    assert "three on b" in git(b, "show", "HEAD:notes/plan.md").stdout  # b's own commit is kept
    report = fleet.sync("b")
    assert report["recovered"] == [] and report["remotes"][0]["merged"] is True
    assert "two on a" in fleet.read("b", "notes/plan.md")


def test_a_note_whose_frontmatter_does_not_parse_on_one_side_is_kept_with_markers_and_reported(
    fleet: Fleet,
) -> None:
    fleet.start({"notes/plan.md": NOTE})
    broken = NOTE.replace("tags: [work]", "tags: [work")  # not YAML: the flow list never closes
    fleet.write("a", "notes/plan.md", broken)
    fleet.sync("a")
    fleet.write("b", "notes/plan.md", NOTE.replace("status: draft", "status: done"))
    report = fleet.sync("b")
    assert report["remotes"][0]["conflicts"] == ["notes/plan.md"]
    text = fleet.read("b", "notes/plan.md")
    # b's block stays (it parses), both blocks are shown in the body: neither side is dropped.
    assert _status(text) == "done"
    assert "<<<<<<< ours frontmatter" in text and "tags: [work\n" in text and "status: done" in text
    status = fleet.shardpy("b", "status", "--json").json()
    assert status["git"]["conflict_markers"] == ["notes/plan.md"]
    fleet.settle()
    assert len({fleet.read(m, "notes/plan.md") for m in MACHINES}) == 1


def test_the_later_edit_wins_though_its_machine_clock_is_years_behind(fleet: Fleet) -> None:
    fleet.start({"notes/plan.md": NOTE})
    fleet.write("a", "notes/plan.md", NOTE.replace("status: draft", "status: first"))
    fleet.sync("a")
    fleet.sync("c")
    clocks = {"b": "2031-01-01T00:00:00Z", "c": "2001-01-01T00:00:00Z"}  # c's clock is 30 years late
    later = fleet.read("c", "notes/plan.md").replace("status: first", "status: c-later")
    fleet.write("c", "notes/plan.md", later)
    fleet.write("b", "notes/plan.md", NOTE.replace("status: draft", "status: b-unaware"))
    for m in ("c", "b", "c", "a"):
        saved = dict(fleet.cli.env)
        if m in clocks:
            fleet.cli.env.update(GIT_AUTHOR_DATE=clocks[m], GIT_COMMITTER_DATE=clocks[m])
        try:
            fleet.sync(m)
        finally:
            fleet.cli.env.clear()
            fleet.cli.env.update(saved)
    fleet.settle()
    dates = git(fleet.machines["a"], "log", "--format=%cI").stdout
    assert "2001-01-01" in dates and "2031-01-01" in dates  # the clocks did disagree
    # c saw a's edit before it made its own (its counter is higher): c's value everywhere.
    for m in MACHINES:
        assert _status(fleet.read(m, "notes/plan.md")) == "c-later"
