"""The repository stands alone: nothing cites a design document that is not in it, every relative
link of the README and of docs/ names a file of the repository, and the pages and files a user
looks for are there (the docs build itself, `make docs`, runs mkdocs --strict in CI)."""

from __future__ import annotations

import re
import subprocess
import tomllib

import pytest

from tests.support.paths import REPO

LINK = re.compile(r"\]\(([^)\s]+)\)")
PAGES = ("architecture.md", "wire-format.md", "call-abi.md", "versioning.md", "torch-defects.md", "api.md")


def _tracked() -> list[str]:
    try:
        r = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [name for name in r.stdout.decode().split("\0") if name]


def test_no_file_cites_a_design_document_outside_the_repository() -> None:
    missing = "DESIGN" + ".md"  # spelled apart, so this file does not cite it either
    citing = [name for name in _tracked()
              if (REPO / name).is_file() and missing.encode() in (REPO / name).read_bytes()]
    assert citing == []


@pytest.mark.parametrize("page", ["README.md", *sorted(p.name for p in (REPO / "docs").glob("*.md"))])
def test_relative_links_name_files_of_the_repository(page: str) -> None:
    path = REPO / page if page == "README.md" else REPO / "docs" / page
    links = [m.group(1).split("#")[0] for m in LINK.finditer(path.read_text(encoding="utf-8"))]
    relative = [link for link in links if link and not re.match(r"[a-z]+:", link)]
    for link in relative:
        target = (path.parent / link).resolve()
        assert target.is_relative_to(REPO) and target.exists(), f"{page}: {link}"


def test_the_pages_and_files_users_look_for_are_there() -> None:
    for page in PAGES:
        assert (REPO / "docs" / page).stat().st_size > 0, page
    for name in ("CHANGELOG.md", "LICENSE", "SECURITY.md"):
        assert (REPO / name).stat().st_size > 0, name
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert {"Homepage", "Documentation", "Changelog", "Issues"} <= set(project["urls"])
