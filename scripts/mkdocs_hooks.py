"""MkDocs hooks (mkdocs.yml): the README is the site's home page.

README.md lives at the top of the repository, outside docs/, where GitHub and a checkout show
it; the site takes it as docs/index.md and rewrites its links into docs/ (`docs/settings.md`
becomes `settings.md`) and to the repository's other files (`LICENSE`), which are not pages."""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]


def on_files(files: Files, config) -> Files:
    files.append(File.generated(config, "index.md", abs_src_path=str(ROOT / "README.md")))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    if page.file.src_uri != "index.md":
        return markdown
    markdown = markdown.replace("](docs/", "](")
    # Files of the repository that are not pages: shown by name, as on a checkout.
    return re.sub(r"\[([^\]]+)\]\((?!https?:|#)([^)#]+)\)", _outside_docs, markdown)


def _outside_docs(match: re.Match) -> str:
    text, target = match.group(1), match.group(2)
    if target.endswith(".md"):
        return match.group(0)
    return f"`{target}`" if text.strip("`") == target else f"{text} (`{target}`)"
