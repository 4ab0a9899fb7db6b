"""The beat scheduler: only the beat holding the `beat` lease (core/leases.py) sends.

Any number of beats may run (one per machine, or a second started by mistake); each ticks as
usual, but a beat sends its due entries only while it holds the lease, renewed on every tick.
A standby checks every BEAT_LEASE_SECONDS / 3 and takes over once the active beat's lease has
expired (it died) or been released (it stopped), so the work goes on within
BEAT_LEASE_SECONDS (10 s by default) + a third of it; a beat starting on the host of a killed
one (or on a database restored with this host's old lease) clears that lease at once
(core.leases.leases_clear_dead, run at beat_init). Settings: CELERY_BEAT_SCHEDULER names this class.
"""

from __future__ import annotations

import logging
from typing import Any

from celery.beat import PersistentScheduler
from django.conf import settings
from django.db import connection

from core.leases import holder_name, lease_release, lease_take

logger = logging.getLogger(__name__)

BEAT_LEASE = "beat"


class LeasedScheduler(PersistentScheduler):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.lease_holder = holder_name()
        self.lease_held = False
        super().__init__(*args, **kwargs)

    @property
    def lease_check_seconds(self) -> float:
        return max(1.0, settings.BEAT_LEASE_SECONDS / 3)

    def lease_renew(self) -> bool:
        try:
            held = lease_take(BEAT_LEASE, self.lease_holder, settings.BEAT_LEASE_SECONDS)
        except Exception as exc:  # the database away: send nothing until the lease is sure again
            logger.warning("beat: cannot renew the scheduler lease (%s: %s); not sending", type(exc).__name__, exc)
            connection.close()
            held = False
        if held != self.lease_held:
            if held:
                logger.info("beat: %s holds the scheduler lease; sending due tasks", self.lease_holder)
            else:
                logger.warning("beat: %s lost the scheduler lease; standing by", self.lease_holder)
            self.lease_held = held
        return held

    def tick(self, *args: Any, **kwargs: Any) -> float:
        if not self.lease_renew():
            return self.lease_check_seconds
        return min(super().tick(*args, **kwargs), self.lease_check_seconds)

    def close(self) -> None:
        if self.lease_held:
            try:
                lease_release(BEAT_LEASE, self.lease_holder)
            except Exception as exc:
                logger.warning("beat: could not release the scheduler lease: %s", exc)
            self.lease_held = False
        super().close()
