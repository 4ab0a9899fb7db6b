"""The email backend `make run` uses: each email a file under EMAIL_FILE_PATH, nothing printed.

Emails carry sign-in and reset codes, so they go where the operator can read them (one file
per message, newest last) and nobody else can: the folder is made readable by this user only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.mail.backends import filebased


class EmailBackend(filebased.EmailBackend):
    def __init__(self, *args: Any, file_path: str | None = None, **kwargs: Any) -> None:
        folder = Path(file_path or settings.EMAIL_FILE_PATH)
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.chmod(0o700)
        kwargs["file_path"] = str(folder)
        super().__init__(*args, **kwargs)
