"""A copier template as a shardpy source: copier itself asks, renders and
runs tasks; shardpy only tells it where the template already sits.

A source root holding ``copier.yml`` / ``copier.yaml`` and no ``.shardmind/``
is a copier template. shardpy has fetched it already (any source kind), so
copier's ``Template`` is pinned to that tree: no
second clone, and ``_src_path`` / ``_commit`` are what ``copier copy`` of
the same source and tag records. Rendering goes into a scratch folder named
like the destination (templates read ``_folder_name``); from there on the
output is an ordinary shard tree.

copier is imported only inside these functions: an ordinary shard's install
or status never loads it. This package is the copier adapter behind the source protocol
(``flows/copierprep.py``); copier's private surface is reached only in ``internals.py``
(issue 27; tests/copier/test_surface.py).
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from shardpy.errors import ShardpyError
from shardpy.sources.copier import internals

if TYPE_CHECKING:
    from shardpy.sources.copier.internals import Template, Worker


DEFAULT_ANSWERS_FILE = ".copier-answers.yml"
Operation = Literal["copy", "update", "adopt"]  # adopt renders only: it runs no task
_ASK_TRIES = 5
TRUST_HINT = "Pass --trust if you trust this template (copier's own --trust rule)."


def import_copier() -> None:
    """copier (and the speed-ups module, which loads Jinja) only on this path."""
    internals.import_copier()


@dataclass(frozen=True)
class Question:
    """One copier question as the wizard shows it (parsed by copier)."""

    name: str
    type: str  # copier type: str, int, float, bool, json, yaml, path
    message: str
    default: Any  # copier's MISSING becomes None with ``required`` set
    required: bool
    choices: list[tuple[str, Any]]
    multiselect: bool
    secret: bool
    placeholder: str


# What the wizard returns for one question; raising ValueError re-asks.
AskFn = Callable[[Question], Any]


@dataclass(frozen=True)
class RenderedFile:
    path: str
    data: bytes  # a link's: its link text
    mode: int

    @property
    def link(self) -> bool:
        """A symbolic link copier keeps (``_preserve_symlinks``): one whose target stays in the project."""
        return stat.S_ISLNK(self.mode)


@dataclass
class Rendered:
    root: Path  # the scratch tree (removed by the caller)
    files: list[RenderedFile]
    remembered: dict[str, Any]  # what the answers file holds, _commit/_src_path first
    answers_file: str  # relative path copier wrote the answers to
    answers: dict[str, Any]  # every answer used (secrets included), for tasks
    skip_if_exists: set[str]  # outputs matching _skip_if_exists: an existing file is left as it is


@dataclass
class CopierTemplate:
    root: Path  # the template's local tree (fetched by shardpy)
    src_path: str  # what copier records as _src_path
    commit: str | None  # `git describe --tags --always` of the commit, as copier records _commit
    commit_hash: str | None
    trust: bool = False
    skip_tasks: bool = False  # --no-hooks: tasks and migrations neither run nor need trust

    # -- copier objects pinned to the fetched tree -------------------------------

    def template(self, commit: str | None = None) -> Template:
        from packaging.version import InvalidVersion, Version

        describe = self.commit if commit is None else commit
        _check_config_nesting(self.root)
        version: Version | None = None
        if describe is not None:
            # copier's own reading: a tag, or "<tag>-<count>-g<hash>" as a post release.
            described = re.match(r"^(.+)-(\d+)-g(\w+)$", describe)
            text = f"{described[1]}.post{described[2]}+{described[3]}" if described else describe
            with contextlib.suppress(InvalidVersion):
                version = Version(text)
        # cached_property values set on the instance: copier never clones,
        # never runs git in a tree without .git, and records what we know.
        pinned: dict[str, Any] = {
            "local_abspath": self.root.resolve(),
            "vcs": "git" if describe is not None else None,
            "commit": describe,
            "commit_hash": self.commit_hash if commit is None else None,
            "version": version,
            "git_index_modes": {},
        }
        return internals.template_for(self.src_path, pinned)

    def worker(self, dst: Path, data: Mapping[str, Any], *, skip_tasks: bool = True) -> Worker:
        tpl = self.template()
        # The Worker's Jinja environment imports the template's _jinja_extensions: a module named there
        # runs its import-time code. Nothing may build one before consent (issue 24 item 14,
        # tests/security/test_copier_trust.py).
        self.refuse_extensions_without_consent(tpl)
        with _copier_errors():
            worker = internals.make_worker(
                tpl,
                render_only=skip_tasks,
                src_path=self.src_path,
                dst_path=dst,
                data=dict(data),
                defaults=True,
                quiet=True,
                overwrite=True,
                unsafe=self.trust,
                skip_tasks=skip_tasks,
                cleanup_on_error=False,
            )
        # render_only (skip_tasks): rendering goes into a scratch folder that is no git
        # repository: copier's per-file `git config`/`update-index` there is one process per
        # file for nothing (or, under a TMPDIR inside a repository, an edit of that
        # repository's index). shardpy writes the modes itself.
        with _copier_errors():
            internals.speed_up(worker)
        return worker

    # -- facts ----------------------------------------------------------------------

    def trusted_by_settings(self, tpl: Template) -> bool:
        """copier's own settings file (its ``trust`` list) trusts this template's URL."""
        with _copier_errors():
            return internals.trusted_by_settings(tpl.url)

    def refuse_extensions_without_consent(self, tpl: Template) -> None:
        """COPIER_UNTRUSTED when the template names Jinja extensions and neither --trust nor copier's
        settings trust it. Reads copier.yml only: nothing the template names is imported here."""
        with _copier_errors():
            named = tpl.jinja_extensions
        if named and not self.trust and not self.trusted_by_settings(tpl):
            raise _untrusted(["jinja_extensions"])

    def unsafe_features(self, operation: Operation, old_commit: str | None = None) -> list[str]:
        """What copier's --trust rule refuses without trust: Jinja extensions,
        tasks, and (on update) the migrations between the two versions. Reads the
        template's configuration only (no Jinja environment: it would import the extensions)."""
        import_copier()

        with _copier_errors():
            tpl = self.template()
            if self.trusted_by_settings(tpl):
                return []
            features: set[str] = set()
            if tpl.jinja_extensions:
                features.add("jinja_extensions")
            runs_tasks = operation != "adopt" and not self.skip_tasks
            if tpl.tasks and runs_tasks:
                features.add("tasks")
            if (
                runs_tasks
                and operation == "update"
                and self.migration_tasks("before", old_commit) + self.migration_tasks("after", old_commit)
            ):
                features.add("migrations")
        return sorted(features)

    def check_trust(self, operation: Operation, old_commit: str | None = None) -> None:
        if self.trust:
            return
        features = self.unsafe_features(operation, old_commit)
        if features:
            raise _untrusted(features)

    def migration_tasks(self, stage: Literal["before", "after"], old_commit: str | None) -> list[Any]:
        if old_commit is None:
            return []
        with _copier_errors():
            return list(self.template().migration_tasks(stage, self.template(old_commit)))

    def answers_relpath(self, answers: Mapping[str, Any], dest_name: str) -> str:
        with _scratch(dest_name) as dst, _copier_errors():
            worker = self.worker(dst, answers)
            return worker.answers_relpath.as_posix()

    def secret_questions(self) -> set[str]:
        with _copier_errors():
            return set(self.template().secret_questions)

    def question_names(self) -> list[str]:
        with _copier_errors():
            return list(self.template().questions_data)

    # -- questions ------------------------------------------------------------------

    def collect(
        self,
        *,
        data: Mapping[str, Any],
        last: Mapping[str, Any],
        dest_name: str,
        ask: AskFn | None,
    ) -> dict[str, Any]:
        """Answers for every question, in copier's order and by copier's rules:
        ``data`` first (parsed and validated by copier), then ``last`` (kept
        answers), then ``ask`` (the wizard) or the default; ``when: false``
        questions take their default. ``ask=None`` means defaults only."""
        import_copier()
        missing = internals.missing()
        with _scratch(dest_name) as dst, _copier_errors(), internals.prompt_phase():
            worker = self.worker(dst, data)
            internals.start_answers(worker, dict(data), dict(last))
            for name, details in worker.template.questions_data.items():
                question = self._question(worker, name, details)
                answer = self._answer(question, worker, ask)
                if answer is not missing:
                    worker.answers.user[name] = answer
            return {k: v for k, v in worker.answers.user.items() if not k.startswith("_")}

    @staticmethod
    def _question(worker: Worker, name: str, details: Mapping[str, Any]) -> Any:
        return internals.question(worker, name, details)

    def _answer(self, question: Any, worker: Worker, ask: AskFn | None) -> Any:
        MISSING = internals.missing()

        name = question.var_name
        answers = worker.answers
        if name in answers.last:
            try:
                kept = question.parse_answer(answers.last[name])
                question.validate_answer(kept)
            except Exception:  # copier drops an answer it cannot parse, then asks again
                del answers.last[name]
        if not question.get_when():
            answers.hide(name)
            answers.last.pop(name, None)
            return question.get_default()
        if name in answers.init:
            given = _checked(question, answers.init[name])
            return given
        if name in answers.last:
            return question.parse_answer(answers.last[name])
        default = question.get_default()
        if not question.get_ask() or ask is None:
            if default is MISSING and ask is None and question.get_ask():
                raise ShardpyError(
                    "COPIER_ANSWER_MISSING",
                    f"The copier question '{name}' has no default and no answer",
                    f"Pass --data {name}=VALUE (install and adopt also take --values FILE), "
                    "or answer it in the wizard.",
                    details={"key": name},
                )
            return default
        return self._ask(question, default, ask)

    def _ask(self, question: Any, default: Any, ask: AskFn) -> Any:
        MISSING = internals.missing()

        shown = Question(
            name=question.var_name,
            type=question.get_type_name(),
            message=question.get_message().strip(),
            default=None if default is MISSING else default,
            required=default is MISSING,
            choices=[(c.title, question.cast_answer(c.value)) for c in internals.choices(question)],
            multiselect=question.multiselect,
            secret=question.secret,
            placeholder=question.get_placeholder(),
        )
        for attempt in range(_ASK_TRIES):
            try:
                return _checked(question, ask(shown))
            except ShardpyError as exc:
                # The wizard shows the problem and asks again (a UI that cannot
                # ask gives the same answer again: stop after a few tries).
                if attempt == _ASK_TRIES - 1:
                    raise
                shown = Question(**{**shown.__dict__, "message": f"{exc.message}\n{shown.message}"})
        raise AssertionError("unreachable")

    # -- rendering ------------------------------------------------------------------

    def render(self, answers: Mapping[str, Any], dest_name: str) -> Rendered:
        """copier renders the template with ``answers`` (tasks are not run
        here: they run in the destination after apply). The files are kept
        in memory (``capture_files``); the scratch folder named like the
        destination stays empty for the caller's own records."""
        import_copier()
        parent = Path(tempfile.mkdtemp(prefix="shardpy-copier-"))
        dst = parent / dest_name
        try:
            worker = self.worker(dst, answers)
            captured = internals.capture_files(worker)
            with internals.operation("copy"), _copier_errors(), worker:
                worker.run_copy()
                remembered = internals.answers_to_remember(worker)
                relpath = worker.answers_relpath.as_posix()
                used = {k: v for k, v in worker.answers.combined.items() if not k.startswith("_")}
                dst.mkdir(exist_ok=True)
                files = _collect(dst) + [RenderedFile(p, d, m) for p, (d, m) in captured.items()]
                files.sort(key=lambda f: f.path)
                check_links(files)
                skip = {f.path for f in files if worker.match_skip(Path(f.path))}
            return Rendered(dst, files, remembered, relpath, used, skip)
        except BaseException:
            from shardpy.sources.model import remove_tree

            remove_tree(parent)
            raise

    def run_tasks(
        self,
        dest: Path,
        answers: Mapping[str, Any],
        *,
        operation: Operation,
        old_commit: str | None = None,
    ) -> int:
        """Run the template's tasks (copy) or its migrations (update) in the
        destination, as copier does after rendering. Needs --trust unless
        copier's settings trust the template. Returns how many ran."""
        import_copier()
        if operation == "adopt" or self.skip_tasks:
            return 0
        worker = self.worker(dest, answers, skip_tasks=False)
        tasks: list[Any] = list(worker.template.tasks)
        if operation == "update":
            # copier's order on update: migrations before, the tasks, migrations after.
            before = self.migration_tasks("before", old_commit)
            tasks = [*before, *tasks, *self.migration_tasks("after", old_commit)]
        if not tasks:
            return 0
        with internals.operation("update" if operation == "update" else "copy"), _copier_errors(), worker:
            internals.ask_then_run(worker, tasks, migrate=operation == "update")
        return len(tasks)


def _check_config_nesting(root: Path) -> None:
    """copier reads copier.yml with PyYAML, whose composer recurses once per nesting level: a
    5,000-deep value was a RecursionError traceback (issue 24 item 15). Bounded like every YAML
    shardpy reads itself (shardpy.yamlsafe)."""
    from shardpy.yamlsafe import YamlTooLarge, check_nesting

    for name in ("copier.yml", "copier.yaml"):
        try:
            text = (root / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        try:
            check_nesting(text)
        except YamlTooLarge as exc:
            where = f" (line {exc.line})" if exc.line else ""
            raise ShardpyError(
                "COPIER_CONFIG_INVALID",
                f"{name} is refused{where}: {exc.message}",
                "Fix the template's copier.yml.",
            ) from None


def _untrusted(features: list[str]) -> ShardpyError:
    return ShardpyError(
        "COPIER_UNTRUSTED",
        f"The copier template uses {', '.join(features)}, which run code from the template",
        TRUST_HINT,
        details={"features": features},
    )


def _checked(question: Any, raw: Any) -> Any:
    """copier's own parsing and validator for one answer, as a typed error."""
    try:
        answer = question.parse_answer(raw)
        question.validate_answer(answer)
    except (ValueError, TypeError) as exc:
        raise ShardpyError(
            "COPIER_ANSWER_INVALID",
            f"{question.var_name}: {exc}",
            "Give an answer the template's question accepts (its type, choices and validator).",
            details={"key": question.var_name},
        ) from None
    return answer


_LINK_HOPS = 40  # links followed through other links before giving up (as the kernel's ELOOP)


def check_links(files: list[RenderedFile], dest: Path | None = None) -> None:
    """Every link the render keeps must point inside the project: its target, resolved the way the
    system will (each ``..`` applied after any link before it is followed; the render's links
    followed, and with ``dest`` the links already in the project), never leaves the destination.
    Anything else is COPIER_SYMLINK: an absolute target, ``..`` out of the project, or a hop through
    another link that leaves it (issue 26 item 4, tests/hardening/test_copier_links.py)."""
    links = {f.path: os.fsdecode(f.data) for f in files if f.link}
    if not links:
        return

    def hop(rel: str) -> str | None:
        if rel in links:
            return links[rel]
        if dest is not None and os.path.islink(dest / rel):
            return os.readlink(dest / rel)
        return None

    for rel, text in links.items():
        if _resolve(hop, rel.split("/")[:-1], text, _LINK_HOPS) is None:
            raise ShardpyError(
                "COPIER_SYMLINK",
                f"The copier template produces a symbolic link that leaves the project: {rel} -> {text}",
                "shardpy installs links that point inside the project only; drop _preserve_symlinks "
                "from copier.yml (copier then copies the link's target), or use copier itself for "
                "this template.",
                path=rel,
                details={"target": text},
            )


def _resolve(hop: Callable[[str], str | None], folder: list[str], text: str, hops: int) -> list[str] | None:
    """``text`` followed from ``folder`` (parts below the project root), ``hop`` naming the link
    text at a path that is a link: the parts it reaches, or None when it leaves the project (or
    loops)."""
    if text.startswith("/") or "\\" in text or hops <= 0:
        return None
    parts = list(folder)
    for part in text.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
            continue
        parts.append(part)
        found = hop("/".join(parts))
        if found is not None:
            reached = _resolve(hop, parts[:-1], found, hops - 1)
            if reached is None:
                return None
            parts = reached
    return parts


def _collect(root: Path) -> list[RenderedFile]:
    """Every file and link copier wrote itself (none unless a speed-up stood aside;
    empty folders are not files and are dropped)."""
    out: list[RenderedFile] = []
    for dirpath, dirs, names in os.walk(root):
        for name in [*dirs, *names]:
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                out.append(RenderedFile(rel, os.fsencode(os.readlink(path)), internals.LINK_MODE))
            elif stat.S_ISREG(st.st_mode):
                out.append(RenderedFile(rel, path.read_bytes(), stat.S_IMODE(st.st_mode)))
    return out


@contextlib.contextmanager
def _scratch(dest_name: str) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="shardpy-copier-") as tmp:
        yield Path(tmp) / dest_name


@contextlib.contextmanager
def _copier_errors() -> Iterator[None]:
    """copier's exceptions as typed shardpy errors (never a traceback)."""
    import_copier()
    from copier import errors as ce
    from jinja2 import TemplateError

    try:
        yield
    except ShardpyError:
        raise
    except ce.UnsafeTemplateError as exc:
        raise ShardpyError("COPIER_UNTRUSTED", str(exc).strip(), TRUST_HINT) from None
    except ce.UnsupportedVersionError as exc:
        raise ShardpyError(
            "COPIER_VERSION_UNSUPPORTED",
            str(exc).strip(),
            "The template needs a newer copier: pip install -U copier.",
        ) from None
    except ce.TaskError as exc:
        raise ShardpyError(
            "COPIER_TASK_FAILED",
            f"A copier task failed (exit {exc.returncode}): {exc.cmd}",
            "The files were written; fix what the task needs and run it by hand.",
        ) from None
    except ce.ConfigFileError as exc:
        raise ShardpyError(
            "COPIER_CONFIG_INVALID", f"copier.yml: {exc}".strip(), "Fix the template's copier.yml."
        ) from None
    except (TemplateError, ce.CopierError, ValueError, TypeError, KeyError, RecursionError) as exc:
        # RecursionError: a YAML file the template reads (external data, an !include) nested past
        # PyYAML's recursion; copier.yml itself is bounded before copier reads it.
        raise ShardpyError(
            "COPIER_RENDER_FAILED",
            f"copier could not render the template: {type(exc).__name__}: {exc}",
            "Check the answers you gave and the template's copier.yml and files.",
        ) from None


def read_answers_file(dest: Path, relpath: str) -> dict[str, Any] | None:
    """The answers file copier wrote in a project (read as copier reads it),
    or None when absent or unreadable."""
    try:
        raw = internals.load_answers_file(dest, relpath)
    except Exception:  # any YAML or OS error: the file cannot serve as answers
        return None
    return raw if isinstance(raw, dict) and raw else None


def user_answers(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The answers of an answers file without copier's own ``_`` keys."""
    return {str(k): v for k, v in raw.items() if not str(k).startswith("_")}
