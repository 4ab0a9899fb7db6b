"""No module grows past a screenful of concepts: 500 lines, outside bench/ and migrations."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MAX_LINES = 500
SKIPPED_DIRS = {".venv", "node_modules", "bench", "migrations", "var", ".git"}


def _too_long(root: Path) -> dict[str, int]:
    found = {}
    for path in root.rglob("*.py"):
        if SKIPPED_DIRS & set(path.relative_to(root).parts):
            continue
        lines = len(path.read_text().splitlines())
        if lines > MAX_LINES:
            found[str(path.relative_to(root))] = lines
    return found


def test_no_module_is_over_500_lines():
    assert _too_long(ROOT) == {}


def test_the_check_finds_a_long_module_and_skips_migrations(tmp_path):
    (tmp_path / "app" / "migrations").mkdir(parents=True)
    (tmp_path / "app" / "long.py").write_text("x = 1\n" * 501)
    (tmp_path / "app" / "short.py").write_text("x = 1\n" * 500)
    (tmp_path / "app" / "migrations" / "0001_initial.py").write_text("x = 1\n" * 900)
    assert _too_long(tmp_path) == {"app/long.py": 501}
