"""A copier template prepared as a shard: copier renders it (into memory,
for a scratch folder named like the destination), and from there install,
update and adopt plan and apply it exactly as they do a shard's output
(docs/COPIER.md).

The render is the shard: every output is a static file, so the merge base
kept in ``.shardmind/templates/`` is the rendered bytes themselves.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shardpy.errors import ShardpyError
from shardpy.flows.choices import UpdateAnswers, parse_data
from shardpy.flows.source import Prepared
from shardpy.shard.loader import MANIFEST_PATH, Shard
from shardpy.shard.manifest import Manifest
from shardpy.shard.produce import Output, Production
from shardpy.shard.schema import Option, Schema, ValueDef
from shardpy.shard.walk import SourceFile
from shardpy.sources import Fetched, ProgressFn, SourceSpec
from shardpy.sources.copier import (
    CopierTemplate,
    Operation,
    Question,
    Rendered,
    check_links,
    read_answers_file,
    user_answers,
)
from shardpy.sources.model import remove_tree
from shardpy.ui import UI
from shardpy.vault import layout
from shardpy.vault.manifest import parse_content_rules
from shardpy.vault.state import State
from shardpy.versions import is_version

if TYPE_CHECKING:
    from shardpy.flows.adopt import AdoptOptions, AdoptResult
    from shardpy.flows.source import Prepare

NAMESPACE = "copier"


@dataclass
class CopierPrepared(Prepared):
    template: CopierTemplate = field(default=None)  # type: ignore[assignment]
    dest_name: str = "project"
    old_commit: str | None = None  # the version an update starts from (migrations)
    operation: Operation = "copy"
    dest: Path | None = None
    rendered: Rendered | None = None
    _scratch: list[Path] = field(default_factory=list)

    writes_values_file = False
    makes_project = True

    # -- the source protocol (flows/source.py's Prepared; issue 27) ----------------------

    def begin(
        self,
        dest: Path,
        operation: Operation,
        *,
        trust: bool,
        no_hooks: bool = False,
        recorded: State | None = None,
    ) -> None:
        """copier renders into a folder named like the project; an update's migrations start
        from the recorded commit."""
        old = None
        if recorded is not None:
            old = str((recorded.copier or {}).get("commit") or recorded.version)
        self.setup(dest, operation, trust=trust, no_hooks=no_hooks, old_commit=old)

    def with_data(self, current: dict[str, Any], pairs: dict[str, str]) -> dict[str, Any]:
        return {**current, **pairs}  # raw text: copier parses it by the question's type

    def update_answers(
        self, state: State, current: dict[str, Any], *, data: list[str], yes: bool, dry_run: bool, ui: UI
    ) -> UpdateAnswers:
        asked = [q for q in self.template.question_names() if q not in current]
        values, notes = self.collect_for_update(data=data, last=current, yes=yes, dry_run=dry_run, ui=ui)
        return UpdateAnswers(values, asked=asked, warnings=notes)

    def state_record(self) -> dict[str, Any] | None:
        return self.copier_record()

    def adopt_own(
        self,
        opts: AdoptOptions,
        ui: UI,
        vault: Path,
        result: AdoptResult,
        *,
        progress: ProgressFn | None,
        prepare: Prepare,
    ) -> AdoptResult | None:
        from shardpy.flows.copieradopt import adopt_copier

        return adopt_copier(self, opts, ui, vault, result, progress=progress, prepare=prepare)

    @property
    def version(self) -> str:
        return self.shard.manifest.version

    @cached_property
    def archive_sha256(self) -> str | None:
        if self.spec.kind in ("local", "bundled"):
            from shardpy.sources.archive import tree_hash

            return tree_hash(self.template.root)
        return self.fetched.archive_sha256

    # -- answers --------------------------------------------------------------------

    def setup(
        self,
        dest: Path,
        operation: Operation,
        *,
        trust: bool,
        no_hooks: bool = False,
        old_commit: str | None = None,
    ) -> None:
        """What the flow knows and copier needs: the destination's name
        (``_folder_name``), the operation, --trust, --no-hooks (copier's
        --skip-tasks), the commit updated from."""
        self.template.skip_tasks = no_hooks
        self.dest_name = dest.name
        self.dest = dest
        self.operation = operation
        self.template.trust = trust
        self.old_commit = old_commit

    def collect(
        self,
        *,
        values_file: Path | None,
        data: list[str],
        last: Mapping[str, Any],
        use_defaults: bool,
        ui: UI,
    ) -> dict[str, Any]:
        """Answers by copier's rules: --values FILE, then --data on top, then
        the kept answers, then the wizard (or the defaults)."""
        from shardpy.shard.values import read_values_file

        given: dict[str, Any] = {}
        if values_file is not None:
            given.update(read_values_file(values_file, display=str(values_file)))
        given.update(parse_data(data))  # raw text: copier parses it by the question's type
        ask = None if use_defaults else _wizard(ui)
        return self.template.collect(data=given, last=last, dest_name=self.dest_name, ask=ask)

    def collect_for_update(
        self, *, data: list[str], last: Mapping[str, Any], yes: bool, dry_run: bool, ui: UI
    ) -> tuple[dict[str, Any], list[str]]:
        """An update's answers, and what to warn about. A dry run with no terminal to ask on
        previews each question the release adds with its default and says so (it stopped with
        VALUES_MISSING; tests/hardening/test_copier_dry_run.py); a real update still asks."""
        preview = dry_run and not yes and not ui.interactive
        values = self.collect(values_file=None, data=data, last=last, use_defaults=yes or preview, ui=ui)
        if not preview:
            return values, []
        secrets = self.template.secret_questions()
        notes = [
            f"dry run: the new question {name} was not asked (no terminal); previewed with its default "
            f"{'(secret, not shown)' if name in secrets else repr(values[name])}. The update itself "
            f"asks it on a terminal; or pass --data {name}=VALUE, or --yes for the default"
            for name in self.template.question_names()
            if name not in last and name in values
        ]
        return values, notes

    def values_to_record(self, values: dict[str, Any]) -> dict[str, Any]:
        """What state keeps: the answers file's answers (never a secret)."""
        if self.rendered is None:
            secrets = self.template.secret_questions()
            return {k: v for k, v in values.items() if k not in secrets}
        return user_answers(self.rendered.remembered)

    def copier_record(self) -> dict[str, Any]:
        assert self.rendered is not None
        return {
            "answers_file": self.rendered.answers_file,
            "src_path": self.template.src_path,
            "commit": self.template.commit,
        }

    # -- rendering --------------------------------------------------------------------

    def render(
        self,
        values: dict[str, Any],
        modules: dict[str, str],
        install_date: str,
        *,
        files: list[SourceFile] | None = None,
        read: Callable[[str], bytes] | None = None,
    ) -> Production:
        """copier renders the answers; the render becomes this source's
        shard (its files are all static, held in memory). ``files`` / ``read``
        (a shard clone's own template copies) have no copier counterpart: a
        copier project holds rendered files only."""
        self.template.check_trust(self.operation, self.old_commit)
        rendered = self.template.render(values, self.dest_name)
        self._scratch.append(rendered.root.parent)
        check_links(rendered.files, self.dest)  # and through the links already in the project
        outputs: dict[str, Output] = {}
        for f in rendered.files:
            if layout.is_engine_path(f.path):
                raise ShardpyError(
                    "COPIER_ENGINE_PATH",
                    f"The copier template produces {f.path}, a path shardpy keeps for itself",
                    "Exclude it in copier.yml (_exclude), or use copier itself for this template.",
                    path=f.path,
                )
            data = self._existing(f.path) if f.path in rendered.skip_if_exists else None
            outputs[f.path] = Output(
                f.path,
                f.path,
                f.data if data is None else data,
                None,
                template=False,
                mode=None if f.link else _exec_mode(f.mode),
                link=f.link,
            )
        manifest_file = rendered.root / MANIFEST_PATH
        manifest_file.parent.mkdir(parents=True, exist_ok=True)
        manifest_file.write_text(_manifest_text(self.shard.manifest), encoding="utf-8")
        # The render is the shard: its bytes (an existing file's under
        # _skip_if_exists) are what the merge base caches.
        held = {p: o.data for p, o in outputs.items()}
        self.shard = _shard(self.shard.source_root, rendered.root, self.shard.manifest, list(outputs), held)
        self.rendered = rendered
        return Production(outputs=outputs, skipped=[])

    def _existing(self, path: str) -> bytes | None:
        """An existing file under _skip_if_exists stays as it is, as copier
        leaves it: its bytes become the output (so nothing is written)."""
        if self.dest is None:
            return None
        target = self.dest / path
        if target.is_file() and not target.is_symlink():
            return target.read_bytes()
        return None

    def after_apply(self, dest: Path, *, trust: bool, no_hooks: bool, warnings: list[str]) -> None:
        """copier's tasks (install) or migrations (update) in the destination,
        after the files are in place, as copier runs them after rendering."""
        if self.rendered is None or self.operation == "adopt":
            return
        ran = self.template.run_tasks(
            dest, self.rendered.answers, operation=self.operation, old_commit=self.old_commit
        )
        if ran:
            kind = "task(s)" if self.operation == "copy" else "task(s) and migration(s)"
            warnings.append(f"ran {ran} copier {kind} in {dest} (their changes are yours, not tracked)")

    def cleanup(self) -> None:
        while self._scratch:
            remove_tree(self._scratch.pop())


def _exec_mode(mode: int) -> int | None:
    """Only the executable bit travels (as git keeps it); other files get the default mode."""
    return 0o755 if mode & 0o111 else None


def prepare_copier(spec: SourceSpec, fetched: Fetched, root: Path) -> CopierPrepared:
    """A fetched copier template, before any answer is collected."""
    commit = _describe(spec, fetched)
    template = CopierTemplate(
        root=root,
        src_path=_src_path(spec),
        commit=commit,
        commit_hash=fetched.resolved.commit,
    )
    manifest = Manifest.model_validate(
        {"apiVersion": "v1", "namespace": NAMESPACE, "name": _slug(spec), "version": _version(fetched)}
    )
    shard = _shard(root, root, manifest, [])
    return CopierPrepared(spec, fetched, shard, template=template)


@dataclass
class RenderedShard(Shard):
    """A copier render as a shard: its files are the rendered bytes, held in
    memory (copier's output is never written to a scratch tree and read back)."""

    data: dict[str, bytes] = field(default_factory=dict)

    def read(self, source_path: str) -> bytes:
        found = self.data.get(source_path)
        return super().read(source_path) if found is None else found


def _shard(
    source_root: Path, root: Path, manifest: Manifest, paths: list[str], data: dict[str, bytes] | None = None
) -> Shard:
    files = [SourceFile(path=p, output=p, module=None, template=False, iterator=None) for p in sorted(paths)]
    return RenderedShard(
        source_root=source_root,
        root=root,
        manifest=manifest,
        schema=Schema(),
        files=files,
        content=parse_content_rules(None),
        migrations_dir=None,
        data=data or {},
    )


def _manifest_text(manifest: Manifest) -> str:
    return (
        "apiVersion: v1\n"
        f"namespace: {manifest.namespace}\n"
        f"name: {manifest.name}\n"
        f"version: {manifest.version}\n"
        "description: a copier template rendered by copier (docs/COPIER.md)\n"
    )


def _slug(spec: SourceSpec) -> str:
    """A stable shard name from the source: its last path part, lowercased."""
    tail = spec.location.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
    tail = re.sub(r"\.(git|tar\.gz|tgz)$", "", tail)
    if spec.subdir:
        tail = spec.subdir.rstrip("/").rsplit("/", 1)[-1]
    slug = re.sub(r"[^a-z0-9]+", "-", tail.lower()).strip("-")
    return slug or "template"


def _version(fetched: Fetched) -> str:
    version = fetched.resolved.version
    return version if version is not None and is_version(version) and not version.startswith("v") else "0.0.0"


def _src_path(spec: SourceSpec) -> str:
    """What ``copier copy`` of the same source records as ``_src_path``."""
    if spec.kind == "github":
        return f"gh:{spec.location}"
    return spec.location


def _describe(spec: SourceSpec, fetched: Fetched) -> str | None:
    """What copier records as ``_commit``: ``git describe --tags --always``
    of the commit (asked of a repository on this machine; for a remote one
    the tag, or the commit when it has none)."""
    resolved = fetched.resolved
    if resolved.commit is None:
        return None
    if spec.kind == "git":
        from shardpy.sources.git import local_repo_path, run_git

        repo = local_repo_path(spec.location)
        if repo is not None and repo.is_dir():
            return run_git(
                ["describe", "--tags", "--always", resolved.commit],
                what="Describing",
                location=spec.location,
                cwd=repo,
            ).strip()
    return resolved.tag or resolved.commit


# -- the wizard -------------------------------------------------------------------


def _wizard(ui: UI) -> Any:
    """Ask one copier question through shardpy's UI (its typed prompts)."""

    def ask(question: Question) -> Any:
        if not ui.interactive:
            raise ShardpyError(
                "VALUES_MISSING",
                f"No answer for {question.name} and no terminal to ask on",
                "Run it on a terminal, take the defaults (--defaults on install and adopt, --yes on "
                "update), or give the answer with --data KEY=VALUE.",
                details={"keys": [question.name]},
            )
        vdef = _value_def(question)
        schema = Schema(values={question.name: vdef})
        default = vdef.default
        answers = ui.ask_values(schema, [question.name], {}, lambda _k, _so_far: default)
        return answers[question.name]

    return ask


def _value_def(q: Question) -> ValueDef:
    options = [Option(value=_option_value(v), label=title) for title, v in q.choices] or None
    allowed = [o.value for o in options or []]
    if q.choices and q.multiselect:
        default = [v for v in map(_option_value, q.default or []) if v in allowed]
        return ValueDef(type="multiselect", message=q.message, options=options, default=default)
    if q.choices:
        chosen = _option_value(q.default) if q.default is not None else None
        return ValueDef(
            type="select",
            message=q.message,
            options=options,
            default=chosen if chosen in allowed else allowed[0],
        )
    if q.type == "bool":
        return ValueDef(type="boolean", message=q.message, default=bool(q.default))
    if q.type in ("int", "float") and isinstance(q.default, int | float) and not isinstance(q.default, bool):
        return ValueDef(type="number", message=q.message, default=q.default)
    return ValueDef(
        type="string",
        message=q.message,
        default=_shown(q),
        required=q.required,
        placeholder=q.placeholder or None,
    )


def _option_value(value: Any) -> str | int | float | bool:
    return value if isinstance(value, str | int | float | bool) else str(value)


def _shown(q: Question) -> str:
    """A default as text, the way copier's prompt shows it."""
    import json

    if q.default is None:
        return ""
    if q.type in ("json", "yaml") and not isinstance(q.default, str):
        return json.dumps(q.default)  # JSON is YAML too, on one line
    return str(q.default)


# -- update and status ------------------------------------------------------------


def recorded_answers(vault: Path, state: State, warnings: list[str]) -> dict[str, Any]:
    """The project's answers: copier's answers file (the user may edit it, as
    with copier), else what state recorded."""
    relpath = (state.copier or {}).get("answers_file") or ".copier-answers.yml"
    raw = read_answers_file(vault, str(relpath))
    if raw is None:
        warnings.append(f"{relpath} is missing or unreadable; using the answers recorded at the last render.")
        return dict(state.values)
    return user_answers(raw)
