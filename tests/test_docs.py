"""The documentation holds together: its links resolve, and docs/rules.md defines every rule id
R1..R19 and every id the engine tests cite."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
RULES = ROOT / "docs" / "rules.md"

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
_CODE = re.compile(r"`[^`\n]*`")
_INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE_LINK = re.compile(r"^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.MULTILINE)
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_RULE_HEADING = re.compile(r"^#{2,6}\s+R(\d+)\b", re.MULTILINE)
_CITED = re.compile(r"\bR(\d+)\b")
_TEST_NAME = re.compile(r"^\s*(?:async\s+)?def\s+(test_\w+)", re.MULTILINE)
_NAME_ID = re.compile(r"(?<=_)r(\d+)(?=_|$)")


def relative_links(text: str) -> list[str]:
    """The link targets of markdown `text` that point into the repository (no URL, no bare
    #anchor), without their #fragment; links inside code are not links."""
    text = _CODE.sub("", _FENCE.sub("", text))
    targets = _INLINE_LINK.findall(text) + _REFERENCE_LINK.findall(text)
    return [
        t.split("#", 1)[0]
        for t in targets
        if not _SCHEME.match(t) and not t.startswith(("#", "//"))
    ]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_point_to_files_in_the_repository(doc: Path) -> None:
    broken = []
    for target in relative_links(doc.read_text(encoding="utf-8")):
        path = (doc.parent / target).resolve()
        if not path.is_relative_to(ROOT) or not path.exists():
            broken.append(target)
    assert not broken, f"{doc.relative_to(ROOT)} links to what is not in the repository: {broken}"


def test_the_link_checker_sees_links_and_skips_code_and_urls() -> None:
    text = (
        "[a](docs/a.md) [b](b.md#part) ![c](img/c.png) [u](https://x.org/y) [h](#top)\n"
        "`[n](not-a-link.md)`\n```\n[m](in-a-fence.md)\n```\n[r]: ref.md\n"
    )
    assert relative_links(text) == ["docs/a.md", "b.md", "img/c.png", "ref.md"]


def _defined_ids() -> set[int]:
    return {int(n) for n in _RULE_HEADING.findall(RULES.read_text(encoding="utf-8"))}


def test_rules_doc_defines_every_rule_id() -> None:
    missing = set(range(1, 20)) - _defined_ids()
    assert not missing, f"docs/rules.md has no heading for {sorted(missing)}"


def test_every_rule_id_the_engine_tests_cite_is_defined() -> None:
    cited: dict[int, set[str]] = {}
    for path in sorted((ROOT / "tests" / "engine").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        where = str(path.relative_to(ROOT))
        for name in _TEST_NAME.findall(text):
            for n in _NAME_ID.findall(name):
                cited.setdefault(int(n), set()).add(where)
        for n in _CITED.findall(text):
            cited.setdefault(int(n), set()).add(where)
    assert cited, "found no rule ids in tests/engine"
    undefined = {n: sorted(files) for n, files in cited.items() if n not in _defined_ids()}
    assert not undefined, f"cited in tests/engine but not defined in docs/rules.md: {undefined}"
