"""Known answers on a generated vault: each query finds its section first."""

from __future__ import annotations

from pathlib import Path

import pytest

from shardpy import index
from tests.index.conftest import manifest, write
from tests.shardkit import Cli

FILLER = "\n".join(
    f"Paragraph {i} about weather, tomatoes, budgets and other ordinary things." for i in range(8)
)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write(
        root,
        "projects/Greenhouse.md",
        "---\ntitle: Greenhouse controller\ntags: [hardware, garden]\n---\n# Greenhouse controller\n\n"
        "Intro text.\n\n## Sensors\n\nWe chose capacitive probes over resistive ones.\n\n"
        "## Calibration\n\nEach probe needs a dry and a wet reading.\n\n## Budget\n\n" + FILLER + "\n",
    )
    write(root, "notes/Habits.md", "# Habits\n\n## Exercise\n\nShe was running every morning before work.\n")
    write(
        root,
        "notes/Soil.md",
        "# Soil\n\n## Measuring\n\nSoil moisture is read every hour.\n\n"
        "## Other\n\nThe moisture of the air and the soil differ.\n",
    )
    write(root, "notes/Air.md", "# Air\n\n## Notes\n\nmoisture in the air; soil is elsewhere.\n")
    write(root, "notes/Cafe.md", "# Breakfast\n\n## Drinks\n\nA café crème at the corner bakery.\n")
    write(root, "notes/数据.md", "# 技术决定\n\n## 方案\n\n我们决定使用数据库复制方案来保证可用性。\n")
    write(
        root,
        "notes/Backup.md",
        "# Резервное копирование\n\n## Решение\n\nРешение о резервном копировании принято.\n",
    )
    write(root, "infra/Upgrade.md", "# Cluster\n\n## Kubernetes upgrade\n\nPlan the window with the team.\n")
    write(
        root,
        "infra/Misc.md",
        "# Misc\n\n## Log\n\n" + FILLER + "\nOnce we talked about kubernetes.\n" + FILLER + "\n",
    )
    write(root, "work/incidents/Outage.md", "# Outage\n\n## Timeline\n\nThe probes went dark at noon.\n")
    write(
        root, "work/active/Probe rollout.md", "---\ntype: project\n---\n# Rollout\n\nNew probes for rooms.\n"
    )
    manifest(
        root, {"frontmatter_required": {"incident": {"required": [], "path_match": "work/incidents/**"}}}
    )
    return root


def first(vault: Path, query: str, **kw: object) -> index.SearchHit:
    result = index.search(vault, query, **kw)  # type: ignore[arg-type]
    assert result.hits, (query, result)
    return result.hits[0]


@pytest.mark.parametrize(
    ("query", "path", "heading"),
    [
        ("capacitive", "projects/Greenhouse.md", ("Sensors",)),  # exact word
        ("runs", "notes/Habits.md", ("Exercise",)),  # stemmed: runs ~ running
        ('"soil moisture"', "notes/Soil.md", ("Measuring",)),  # phrase
        ("calibr*", "projects/Greenhouse.md", ("Calibration",)),  # prefix
        ("creme", "notes/Cafe.md", ("Drinks",)),  # diacritic-free query for crème
        ("cafe creme", "notes/Cafe.md", ("Drinks",)),
        ("数据库", "notes/数据.md", ("方案",)),  # Chinese, inside an unsegmented run
        ("复制", "notes/数据.md", ("方案",)),  # a two-character word
        ("резервном", "notes/Backup.md", ("Решение",)),  # Cyrillic
        ("РЕЗЕРВНОМ", "notes/Backup.md", ("Решение",)),  # Cyrillic, case-folded
        ("kubernetes", "infra/Upgrade.md", ("Kubernetes upgrade",)),  # heading beats a body mention
    ],
)
def test_known_answers(vault: Path, query: str, path: str, heading: tuple[str, ...]) -> None:
    hit = first(vault, query)
    assert (hit.path, hit.heading) == (path, heading)
    assert hit.score > 0


def test_phrase_excludes_scattered_words(vault: Path) -> None:
    paths = [h.path for h in index.search(vault, '"soil moisture"').hits]
    assert paths == ["notes/Soil.md"]


def test_and_then_or_fallback(vault: Path) -> None:
    both = index.search(vault, "capacitive probes")
    assert both.match == "all" and [h.path for h in both.hits] == ["projects/Greenhouse.md"]
    fallback = index.search(vault, "capacitive zebrafish")
    assert fallback.match == "any"
    assert fallback.hits[0].path == "projects/Greenhouse.md"
    assert index.search(vault, "zebrafish quokka").hits == []


def test_operators_pass_through(vault: Path) -> None:
    hits = index.search(vault, "probes NOT capacitive").hits
    sections = {(h.path, h.heading) for h in hits}
    assert ("projects/Greenhouse.md", ("Calibration",)) in sections  # NOT works per section
    assert ("projects/Greenhouse.md", ("Sensors",)) not in sections
    either = {h.path for h in index.search(vault, "exercise OR bakery").hits}
    assert either == {"notes/Habits.md", "notes/Cafe.md"}


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ('"数据库"', "notes/数据.md"),  # a quoted word inside an unsegmented run
        ("数据库*", "notes/数据.md"),  # a prefix
        ('"数据库" AND 复制', "notes/数据.md"),
        ("(数据库 OR zebrafish)", "notes/数据.md"),
        ('"cafe" AND "strasse" OR "数据库"', "notes/数据.md"),
    ],
)
def test_fts5_syntax_finds_a_word_inside_an_unsegmented_run(vault: Path, query: str, path: str) -> None:
    """FTS5 syntax passes through, but the tokenizer makes one token of a whole run of Chinese: a
    quoted or prefixed word found nothing where the plain word finds its note (issue 29, the
    closing note's left-out list). A standalone one-word phrase is also searched as plain words."""
    assert first(vault, query).path == path


def test_fts5_syntax_keeps_its_exact_meaning_elsewhere(vault: Path) -> None:
    excluded = index.search(vault, '"数据库" NOT 复制')  # NOT still excludes, and nothing was kept narrow
    assert excluded.hits == [] and not any("whole run" in n for n in excluded.notices)
    beside = index.search(vault, '"数据库" 复制')  # beside another word: as typed, and said
    assert beside.hits == [] and any("beside another word" in n for n in beside.notices)
    inside = index.search(vault, "NEAR(数据库 复制)")  # a NEAR group is left as typed, and said
    assert inside.hits == [] and any("whole run" in n for n in inside.notices)
    assert [h.path for h in index.search(vault, '"soil moisture"').hits] == ["notes/Soil.md"]


def test_a_sharp_s_is_both_spellings_in_fts5_syntax_too(tmp_path: Path) -> None:
    root = tmp_path / "v"
    write(root, "Strasse.md", "# Straße\n\nDie Straße ist lang.\n")
    for query in ('"strasse"', '"Straße"', "strasse OR zebrafish", '"STRASSE" AND lang'):
        assert first(root, query).path == "Strasse.md", query


def test_syntax_error_is_retried_as_words(vault: Path) -> None:
    result = index.search(vault, '"capacitive AND (')
    assert result.hits[0].path == "projects/Greenhouse.md"
    assert any("syntax" in n for n in result.notices)


def test_snippet_marks_matched_words(vault: Path) -> None:
    hit = first(vault, "capacitive")
    assert "«capacitive»" in hit.snippet
    assert "«数据库»" in first(vault, "数据库").snippet


def test_hit_fields(vault: Path) -> None:
    hit = first(vault, "capacitive")
    assert hit.title == "Greenhouse controller"
    text = (vault / hit.path).read_text().splitlines()
    assert text[hit.line - 1] == "## Sensors"
    assert hit.to_json()["heading"] == ["Sensors"]


def test_one_hit_per_note(vault: Path) -> None:
    hits = index.search(vault, "greenhouse").hits
    assert [h.path for h in hits] == ["projects/Greenhouse.md"]


def test_type_from_frontmatter_and_manifest_folders(vault: Path) -> None:
    incident = index.search(vault, "probes", type="incident").hits
    assert [h.path for h in incident] == ["work/incidents/Outage.md"]
    assert incident[0].type == "incident"
    project = index.search(vault, "probes", type="project").hits
    assert [h.path for h in project] == ["work/active/Probe rollout.md"]


def test_path_filter_matches_whole_segments(vault: Path) -> None:
    write(vault, "work/active-secrets/Probe.md", "# Secret\n\nprobes here\n")
    hits = index.search(vault, "probes", path="work/active", max_age=0).hits
    assert [h.path for h in hits] == ["work/active/Probe rollout.md"]
    assert index.search(vault, "probes", path="work/active/Probe rollout.md").hits
    assert len(index.search(vault, "probes", path="work/").hits) == 3


def test_offset_pages_through(vault: Path) -> None:
    all_hits = index.search(vault, "probes", top=10).hits
    paged = [h for k in range(len(all_hits)) for h in index.search(vault, "probes", top=1, offset=k).hits]
    assert [h.path for h in paged] == [h.path for h in all_hits]


def test_cli_search_and_index(vault: Path, cli: Cli) -> None:
    res = cli.run("index", vault, "--json")
    assert res.exit_code == 0, res.output
    assert res.json()["indexed"] == 11
    res = cli.run("search", "capacitive", "--vault", vault, "--json")
    assert res.exit_code == 0, res.output
    data = res.json()
    assert data["match"] == "all" and data["hits"][0]["path"] == "projects/Greenhouse.md"
    res = cli.run("search", "kubernetes", cwd=vault / "infra")  # default vault: cwd
    assert res.exit_code == 0 and "Upgrade.md:3 › Kubernetes upgrade" in res.stdout
    # By words: the filter leaves nothing (by meaning, the nearest incident would answer).
    res = cli.run("search", "capacitive", "--vault", vault, "--type", "incident", "--mode", "lexical")
    assert "No notes match" in res.stdout
