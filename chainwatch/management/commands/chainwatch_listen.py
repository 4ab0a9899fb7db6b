"""`manage.py chainwatch_listen`: the long-running process that reacts to new blocks at once
(chainwatch/listener.py). Stops cleanly on SIGTERM or Ctrl-C."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from typing import Any

from django.core.management.base import BaseCommand

from chainwatch import listener
from core import metrics
from core.runtime import apply_runtime_guards


class Command(BaseCommand):
    help = "Watch the configured chains by subscription (new blocks), polling where none is offered."

    def handle(self, *args: Any, **options: Any) -> None:
        apply_runtime_guards()
        metrics.serve_own_port("listener")  # its passes' figures, when METRICS_PORT is set
        asyncio.run(self._run())

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        task = asyncio.ensure_future(listener.listen())
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, task.cancel)
        with contextlib.suppress(asyncio.CancelledError):
            await task
