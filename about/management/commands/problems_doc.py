"""Write docs/problems.md from about/problems.py (the pages at /problems/{code} say the same)."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from about.problems import problems_markdown


class Command(BaseCommand):
    help = "Write docs/problems.md from about/problems.py."

    def handle(self, *args, **options) -> None:
        target = Path(settings.BASE_DIR) / "docs" / "problems.md"
        target.write_text(problems_markdown())
        self.stdout.write(f"Wrote {target}")
