"""The README is the front door: short, `make run` and `make test` first, and its way of running
one test works as written. (Its quick start runs in tests/platform/test_make_run.py; the pages it
points to are built, links checked, by `make lint`'s `mkdocs build --strict`.)"""

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def shell_lines(section: str) -> list[str]:
    """The commands of a README section's sh blocks, comments dropped."""
    body = README.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", body, flags=re.S):
        lines += [line.split("  #", 1)[0].strip() for line in block.replace("\\\n", " ").splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def test_the_readme_is_short_and_shows_make_run_then_make_test_first():
    assert len(README.splitlines()) <= 300
    first_block = re.search(r"```sh\n(.*?)```", README, flags=re.S).group(1)
    assert [line.split("#", 1)[0].strip() for line in first_block.splitlines()][:2] == ["make run", "make test"]


@pytest.mark.slow  # a pytest run of its own, with a new test database
def test_the_readmes_one_test_command_runs_that_test(tmp_path):
    [command] = [line for line in shell_lines("Tests") if line.startswith(".venv/bin/pytest")]
    node = command.split()[-1]
    assert "::" in node and (ROOT / node.split("::", 1)[0]).exists()
    # This run's servers under another database name: the command never touches this run's test database.
    server, _, name = os.environ["DATABASE_URL"].rpartition("/")
    env = os.environ | {"DATABASE_URL": f"{server}/{name}_readme", "PYTEST_ADDOPTS": "-p no:cacheprovider"}
    ran = subprocess.run(["bash", "-c", command], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    assert re.search(r"^1 passed\b", ran.stdout, re.M), ran.stdout[-3000:]
