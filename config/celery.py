import functools
import json
import logging
import os
import sys
import uuid

from celery import Celery, Task, signals

from config.env import load_local_env

load_local_env()
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


class ScheduledWorkTask(Task):
    """Every task's base. A run of a beat entry's work (the same task and arguments as an entry
    of CELERY_BEAT_SCHEDULE) holds a lease on that work while it runs (config/leases.py): a
    second send of the same work, from a second beat or a late message, finds it held and is
    skipped. A worker killed mid-run holds it until the task time limit passes."""

    def __call__(self, *args, **kwargs):
        work = None if self.request.called_directly else scheduled_work(self.name, args, kwargs)
        if work is None:
            return super().__call__(*args, **kwargs)
        from config.leases import lease_release, lease_take

        holder = (self.request.id or uuid.uuid4().hex)[:64]
        seconds = self.time_limit or self.app.conf.task_time_limit or 300
        if not lease_take(work, holder, seconds):
            logger.info("%s: the same work is running elsewhere; this run is skipped", work)
            return None
        try:
            return super().__call__(*args, **kwargs)
        finally:
            try:
                lease_release(work, holder)
            except Exception as exc:  # it expires by itself
                logger.warning("%s: could not release its lease: %s", work, exc)


@functools.cache
def _scheduled_entries() -> frozenset[str]:
    from django.conf import settings

    return frozenset(
        _work_name(entry["task"], tuple(entry.get("args", ())), entry.get("kwargs", {}))
        for entry in settings.CELERY_BEAT_SCHEDULE.values()
    )


def _work_name(task: str, args: tuple, kwargs: dict) -> str:
    return f"scheduled:{task}:{json.dumps([list(args), kwargs], sort_keys=True, default=str)}"[:200]


def scheduled_work(task: str, args, kwargs) -> str | None:
    """The lease name of this run's work when it is a beat entry's, else None."""
    name = _work_name(task, tuple(args or ()), kwargs or {})
    return name if name in _scheduled_entries() else None


app = Celery("config", task_cls=ScheduledWorkTask)
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

logger = logging.getLogger(__name__)


@signals.worker_init.connect
@signals.worker_process_init.connect
@signals.beat_init.connect
def _runtime_guards(**kwargs) -> None:
    from config.runtime import apply_runtime_guards

    apply_runtime_guards()


@signals.worker_ready.connect
@signals.beat_init.connect
def _report_started(sender=None, **kwargs) -> None:
    logger.info("started with recursion limit %d", sys.getrecursionlimit())
