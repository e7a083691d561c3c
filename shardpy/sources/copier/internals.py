"""Speed-ups for copier's render that keep its bytes: copier renders every
template path part, the answers file's name and every file template with
Jinja, compiling each again on every run. Here a render

- compiles each text once (copier compiled each path part again per file),
- passes text with no Jinja syntax through as it is (what Jinja renders it to),
- loads file templates compiled by an earlier run from a machine-wide cache
  (``<cache>/copier-jinja/``), keyed by the environment's fingerprint, the
  template's name and its source's sha256, each entry checked against the
  sha256 of its payload before it is used,
- takes copier's output in memory instead of writing a scratch tree and
  reading it back (``capture_files``),

and copier is imported without the prompt library it loads for prompts
shardpy never lets it show (``import_copier``).

Each one stands aside when a template could tell the difference: Jinja
extensions of the template's own (``_jinja_extensions``) may hook the
compile, so with them copier renders as it does itself.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import stat
import sys
import types
from collections.abc import Callable, Iterator
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from jinja2.bccache import Bucket, BytecodeCache

from shardpy.errors import ShardpyError
from shardpy.fsutil import atomic_write, sha256_bytes

if TYPE_CHECKING:
    from copier._main import Worker as Worker
    from copier._template import Template as Template

JINJA_CACHE = "copier-jinja"
_DIGEST = 32  # bytes of sha256 before each cached payload


# -- importing copier ------------------------------------------------------------------


def import_copier() -> None:
    """Import copier, standing in for the prompt library it imports at
    module level (questionary pulls in prompt_toolkit and wcwidth's tables:
    about half of copier's import time). shardpy asks every question itself
    and runs copier with defaults, so copier never prompts; should it ever,
    each stand-in imports the real thing on its first call. The stand-ins
    leave ``sys.modules`` once copier is in: any later ``import questionary``
    gets the real package."""
    if "copier._main" in sys.modules:
        return
    if "questionary" in sys.modules or "prompt_toolkit" in sys.modules:
        import copier._main  # the real ones are loaded already

        return
    stand_ins = _stand_ins()
    for name, module in stand_ins.items():
        sys.modules[name] = module
    try:
        import copier._main
        import copier._user_data  # noqa: F401
    finally:
        for name, module in stand_ins.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]


def _late(module: str, attr: str) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        import importlib

        return getattr(importlib.import_module(module), attr)(*args, **kwargs)

    call.__name__ = call.__qualname__ = attr
    return call


def _stand_ins() -> dict[str, types.ModuleType]:
    """The names copier imports from questionary and prompt_toolkit, each
    calling the real one when called."""
    wanted = {
        "questionary": {"confirm": "questionary", "unsafe_prompt": "questionary"},
        "questionary.prompts": {},
        "questionary.prompts.common": {"Choice": "questionary.prompts.common"},
        "prompt_toolkit": {},
        "prompt_toolkit.lexers": {"PygmentsLexer": "prompt_toolkit.lexers"},
    }
    out: dict[str, types.ModuleType] = {}
    for name, attrs in wanted.items():
        module = types.ModuleType(name, "shardpy's stand-in while copier is imported")
        module.__path__ = []  # a package, so its submodule stand-ins import
        for attr, real in attrs.items():
            setattr(module, attr, _late(real, attr))
        out[name] = module
    return out


# -- one render ------------------------------------------------------------------------


def speed_up(worker: Any) -> None:
    """Apply the speed-ups to one copier ``Worker`` (before it renders)."""
    env = worker.jinja_env
    if not _known_extensions(env):
        return
    plain = _plain_check(env)
    _memoize_from_string(env, plain)
    _pass_plain_text(worker, plain)
    if env.bytecode_cache is None:
        from shardpy.cachedir import cache_dir

        # The fingerprint is taken when the first file template loads (most
        # workers only ask questions and never do).
        env.bytecode_cache = CompiledTemplates(
            lambda: cache_dir() / JINJA_CACHE / env_fingerprint(env), lambda: _reset_yield(env)
        )


_KNOWN_EXTENSIONS = frozenset(
    {
        "copier._jinja_ext.YieldExtension",  # resets its context when compiling: redone here on each use
        "jinja2_ansible_filters.AnsibleCoreFiltersExtension",  # filters only
    }
)


def _known_extensions(env: Any) -> bool:
    """Only copier's own extensions: a template's own may rewrite the
    source or the token stream while compiling, which a cache would skip."""
    return all(
        f"{type(e).__module__}.{type(e).__qualname__}" in _KNOWN_EXTENSIONS for e in env.extensions.values()
    )


def _reset_yield(env: Any) -> None:
    """What copier's YieldExtension does when it compiles a template."""
    from copier._jinja_ext import get_yield_context

    ctx = get_yield_context(env)
    ctx.yield_name = None
    ctx.yield_iterable = None


class _Plain:
    """A template of text with no Jinja syntax: it renders as the text itself."""

    def __init__(self, text: str) -> None:
        self.text = text

    def render(self, *args: Any, **kwargs: Any) -> str:
        return self.text


def _plain_check(env: Any) -> Callable[[str], bool]:
    """Text that Jinja would render unchanged: none of the environment's
    delimiters or line prefixes, and no line break (Jinja rewrites those to
    its newline sequence and may drop a trailing one)."""
    marks = [
        env.block_start_string,
        env.variable_start_string,
        env.comment_start_string,
        env.line_statement_prefix,
        env.line_comment_prefix,
        "\n",
        "\r",
    ]
    present = [m for m in marks if m]

    def plain(text: str) -> bool:
        return not any(m in text for m in present)

    return plain


def _memoize_from_string(env: Any, plain: Callable[[str], bool]) -> None:
    """copier compiles every path part and the answers-file name again for
    each file (most of an update's render time); compile each text once,
    and text with no Jinja syntax not at all. The yield context is reset on
    every call, as copier's YieldExtension does when it compiles, so a
    cached template behaves as a fresh one."""
    compile_string = env.from_string
    cache: dict[str, Any] = {}

    def from_string(source: Any, globals: Any = None, template_class: Any = None) -> Any:
        if globals is not None or template_class is not None or not isinstance(source, str):
            return compile_string(source, globals, template_class)
        _reset_yield(env)
        if source not in cache:
            cache[source] = _Plain(source) if plain(source) else compile_string(source)
        return cache[source]

    env.from_string = from_string


def _pass_plain_text(worker: Any, plain: Callable[[str], bool]) -> None:
    """copier renders each path part with a fresh render context (the
    answers, the answers file's content): a part with no Jinja syntax is the
    text itself, without building one."""
    render_string = worker._render_string
    env = worker.jinja_env

    def _render_string(string: Any, extra_context: Any = None) -> Any:
        if isinstance(string, str) and plain(string):
            _reset_yield(env)  # as copier's compile of it would
            return string
        return render_string(string, extra_context=extra_context)

    object.__setattr__(worker, "_render_string", _render_string)


LINK_MODE = stat.S_IFLNK | 0o777  # the mode a captured symbolic link carries (its bytes: the link text)


def capture_files(worker: Any) -> dict[str, tuple[bytes, int]]:
    """What copier renders, kept in memory instead of written to the scratch
    folder and read back: path -> (bytes, mode). copier asks
    ``_render_allowed`` with a file's final bytes and mode just before it
    writes; in an empty scratch folder it always answers yes, so answering
    no after taking them leaves copier's result the same, unwritten (a later
    output of the same path replaces an earlier one, as copier's overwrite
    does). Folders are not created (shardpy manages files). A symbolic link
    (``_preserve_symlinks``) is its link text with :data:`LINK_MODE`."""
    files: dict[str, tuple[bytes, int]] = {}
    if not _known_extensions(worker.jinja_env):
        return files

    def render_allowed(
        dst_relpath: Path,
        is_dir: bool = False,
        is_symlink: bool = False,
        expected_contents: bytes | Path = b"",
        expected_mode: int | None = None,
    ) -> bool:
        rel = dst_relpath.as_posix()
        if is_symlink:
            files[rel] = (os.fsencode(expected_contents), LINK_MODE)
        elif not is_dir:
            assert isinstance(expected_contents, bytes) and expected_mode is not None
            files[rel] = (expected_contents, stat.S_IMODE(expected_mode))
        return False

    object.__setattr__(worker, "_render_allowed", render_allowed)
    return files


# -- compiled file templates -----------------------------------------------------------


def env_fingerprint(env: Any) -> str:
    """What Jinja's compiled code depends on besides the source: the
    versions that compile it, the syntax options, and which filters and
    tests exist with which calling convention (checked at compile time)."""

    def calls(table: dict[str, Any]) -> list[tuple[str, str]]:
        return sorted((name, str(getattr(f, "jinja_pass_arg", ""))) for name, f in table.items())

    options = {
        "python": sys.version,
        "packages": {p: _version(p) for p in ("jinja2", "copier", "jinja2-ansible-filters", "markupsafe")},
        "env": f"{type(env).__module__}.{type(env).__qualname__}",
        "extensions": sorted(env.extensions),
        "syntax": [
            getattr(env, key)
            for key in (
                "block_start_string",
                "block_end_string",
                "variable_start_string",
                "variable_end_string",
                "comment_start_string",
                "comment_end_string",
                "line_statement_prefix",
                "line_comment_prefix",
                "trim_blocks",
                "lstrip_blocks",
                "newline_sequence",
                "keep_trailing_newline",
                "optimized",
                "is_async",
            )
        ],
        "autoescape": repr(env.autoescape) if isinstance(env.autoescape, bool) else _name(env.autoescape),
        "finalize": None if env.finalize is None else _name(env.finalize),
        "filters": calls(env.filters),
        "tests": calls(env.tests),
    }
    text = json.dumps(options, sort_keys=True, default=str)
    return sha256_bytes(text.encode())[:32]


@functools.cache
def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "absent"


def _name(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', repr(type(obj)))}"


class CompiledTemplates(BytecodeCache):
    """Jinja bytecode on disk, one file per (template name, source sha256).

    The fetched template's folder differs on every run, so the file name
    is not part of the key (Jinja's own cache keys on it); the code
    loaded is given this run's file name, so errors and tracebacks read
    as after a fresh compile. An entry whose payload does not match its
    recorded sha256 is ignored and replaced: a damaged (or half-written, or
    edited) entry is never run. Like Python's own ``__pycache__``, the
    folder is trusted as the user's own."""

    def __init__(self, directory: Callable[[], Path], on_lookup: Callable[[], None]) -> None:
        self._directory = directory
        self.on_lookup = on_lookup

    @functools.cached_property
    def directory(self) -> Path:
        return self._directory()

    def get_cache_key(self, name: str, filename: str | None = None) -> str:
        return sha256_bytes(name.encode("utf-8"))

    def get_source_checksum(self, source: str) -> str:
        return sha256_bytes(source.encode("utf-8"))

    def get_bucket(self, environment: Any, name: str, filename: str | None, source: str) -> Bucket:
        bucket = super().get_bucket(environment, name, filename, source)
        if bucket.code is not None and filename is not None:
            bucket.code = _with_filename(bucket.code, filename)
        return bucket

    def _path(self, bucket: Bucket) -> Path:
        return self.directory / f"{bucket.key[:40]}-{bucket.checksum[:24]}.jbc"

    def load_bytecode(self, bucket: Bucket) -> None:
        # Jinja compiles right after a miss, and copier's yield tag resets
        # its context when compiling: a hit must reset it too.
        self.on_lookup()
        try:
            raw = self._path(bucket).read_bytes()
        except OSError:
            return
        digest, payload = raw[:_DIGEST], raw[_DIGEST:]
        if bytes.fromhex(sha256_bytes(payload)) != digest:
            return  # damaged: compiled again and rewritten by dump_bytecode
        bucket.bytecode_from_string(payload)

    def dump_bytecode(self, bucket: Bucket) -> None:
        payload = bucket.bytecode_to_string()
        target = self._path(bucket)
        with contextlib.suppress(OSError, ShardpyError):  # a cache that cannot be written is only slower
            target.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(
                target.parent, target.name, [bytes.fromhex(sha256_bytes(payload)), payload], durable=False
            )


def _with_filename(code: types.CodeType, filename: str) -> types.CodeType:
    """``code`` (and the functions compiled inside it) as compiled from ``filename``."""
    consts = tuple(
        _with_filename(c, filename) if isinstance(c, types.CodeType) else c for c in code.co_consts
    )
    return code.replace(co_filename=filename, co_consts=consts)


# -- copier's private surface (issue 27) ------------------------------------------------------
# Every name of copier's that is not its public API (``copier.run_*``, ``copier.errors``) is
# reached in this module and nowhere else in shardpy; tests/copier/test_surface.py pins each
# against the installed copier, so an upgrade that moves one fails there, not in a user's render.

# (module, name) imported from copier's private modules.
SURFACE: tuple[tuple[str, str], ...] = (
    ("copier._main", "Worker"),
    ("copier._main", "_operation"),
    ("copier._template", "Template"),
    ("copier._settings", "SettingsModel"),
    ("copier._settings", "is_trusted_repository"),
    ("copier._types", "MISSING"),
    ("copier._types", "Phase"),
    ("copier._user_data", "AnswersMap"),
    ("copier._user_data", "Question"),
    ("copier._user_data", "load_answersfile_data"),
    ("copier._jinja_ext", "get_yield_context"),
    ("copier._jinja_ext", "YieldExtension"),
)
# (class, member) used or replaced on copier's objects: methods called or patched, and the
# cached properties set on a Template pinned to the fetched tree.
MEMBERS: tuple[tuple[str, str], ...] = (
    *(
        ("copier._main.Worker", m)
        for m in (
            "_external_data",
            "_render_context",
            "_answers_to_remember",
            "_ask",
            "_execute_tasks",
            "_render_string",
            "_render_allowed",
            "_sync_git_index_executable_bit",
            "run_copy",
            "match_skip",
            "answers_relpath",
            "jinja_env",
            "template",
            "user_defaults",
            "settings",
        )
    ),
    ("copier._user_data.Question", "_formatted_choices"),
    *(
        ("copier._template.Template", m)
        for m in ("local_abspath", "vcs", "commit", "commit_hash", "version", "git_index_modes")
    ),
)


def template_for(url: str, pinned: dict[str, Any]) -> Template:
    """copier's ``Template`` for ``url`` with its cached properties set from ``pinned``: copier
    never clones, never runs git in a tree without .git, and records what shardpy knows."""
    import_copier()
    from copier._template import Template

    tpl = Template(url=url)
    tpl.__dict__.update(pinned)
    return tpl


def make_worker(template: Template, *, render_only: bool, **options: Any) -> Worker:
    """copier's ``Worker`` bound to ``template``; ``render_only``: rendering into a scratch folder
    that is no git repository, so copier's per-file git index sync is skipped."""
    import_copier()
    from copier._main import Worker

    worker = Worker(**options)
    worker.__dict__["template"] = template
    if render_only:
        object.__setattr__(worker, "_sync_git_index_executable_bit", _no_git_index)
    return worker


def _no_git_index(dst_relpath: Path, src_mode: int) -> None:
    return None


def trusted_by_settings(url: str) -> bool:
    """copier's own settings file (its ``trust`` list) trusts ``url``."""
    from copier._settings import SettingsModel, is_trusted_repository

    return bool(is_trusted_repository(SettingsModel.from_file().trust, url))


def missing() -> Any:
    """copier's marker for "no value"."""
    from copier._types import MISSING

    return MISSING


def prompt_phase() -> contextlib.AbstractContextManager[Any]:
    from copier._types import Phase

    return Phase.use(Phase.PROMPT)


def start_answers(worker: Any, init: dict[str, Any], last: dict[str, Any]) -> None:
    """The worker's answers as copier starts them (defaults, given, kept, metadata, external)."""
    from copier._user_data import AnswersMap

    worker.answers = AnswersMap(
        user_defaults=worker.user_defaults,
        init=init,
        last=last,
        metadata=worker.template.metadata,
        external=worker._external_data(),
    )


def question(worker: Any, name: str, details: Any) -> Any:
    """copier's ``Question`` for ``name`` in the worker's context."""
    from copier._user_data import Question

    return Question(
        answers=worker.answers,
        context=worker._render_context(),
        jinja_env=worker.jinja_env,
        settings=worker.settings,
        var_name=name,
        **details,
    )


def choices(question: Any) -> list[Any]:
    """A question's choices, formatted as copier shows them."""
    return list(question._formatted_choices)


def answers_to_remember(worker: Any) -> dict[str, Any]:
    return dict(worker._answers_to_remember())


@contextlib.contextmanager
def operation(name: Literal["copy", "update"]) -> Iterator[None]:
    """copier's current operation (copy, update) for the templates and tasks that read it."""
    from copier._main import _operation

    token = _operation.set(name)
    try:
        yield
    finally:
        _operation.reset(token)


def ask_then_run(worker: Any, tasks: list[Any], *, migrate: bool) -> None:
    """What copier does to run tasks (or migrations) in the destination: answers first."""
    from copier._types import Phase

    with Phase.use(Phase.PROMPT):
        worker._ask()
    with Phase.use(Phase.MIGRATE if migrate else Phase.TASKS):
        worker._execute_tasks(tasks)


def load_answers_file(dest: Path, relpath: str) -> Any:
    import_copier()
    from copier._user_data import load_answersfile_data

    return load_answersfile_data(dest, relpath)
