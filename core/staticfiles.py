"""What `collectstatic` collects: only what a page of the service loads."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib.staticfiles import finders

# DRF's browsable-API assets (the API answers JSON only) and ReDoc's bundle (/swagger is the
# API's page): every `collectstatic` would otherwise copy and compress them, about 6 s of CPU at
# each start of `make run` (docs/decisions.md).
NOT_LOADED = ["rest_framework", "redoc"]


class AppDirectoriesFinder(finders.AppDirectoriesFinder):
    """Django's finder of the apps' static/ directories, listing (for `collectstatic`) none of
    NOT_LOADED; a file asked for by name is still found."""

    def list(self, ignore_patterns: Iterable[str] | None) -> Iterable[Any]:
        return super().list([*(ignore_patterns or []), *NOT_LOADED])
