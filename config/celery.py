import functools
import json
import logging
import os
import sys
import threading

from celery import Celery, Task, signals

from core.env import load_local_env

load_local_env()
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")


class ScheduledWorkTask(Task):
    """Every task's base. A run of a beat entry's work (the same task and arguments as an entry
    of CELERY_BEAT_SCHEDULE) holds a lease on that work while it runs (core/leases.py): a
    second send of the same work, from a second beat or a late message, finds it held and is
    skipped. The lease is short (LEASE_SECONDS) and renewed by the process's lease keeper while
    the run lasts, so a worker killed mid-run holds it for one lease at most."""

    def __call__(self, *args, **kwargs):
        work = None if self.request.called_directly else scheduled_work(self.name, args, kwargs)
        if work is None:
            return super().__call__(*args, **kwargs)
        from core.leases import holder_name, keeper, lease_release, lease_seconds, lease_take

        holder = holder_name()
        seconds = lease_seconds()
        if not lease_take(work, holder, seconds):
            logger.info("%s: the same work is running elsewhere; this run is skipped", work)
            return None
        keeper.hold(work, holder, seconds)
        try:
            return super().__call__(*args, **kwargs)
        finally:
            keeper.drop(work)
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
    from core.runtime import apply_runtime_guards

    apply_runtime_guards()


@signals.beat_init.connect
def _refresh_rates_at_start(**kwargs) -> None:
    """Beat starting (alone or embedded in a worker) sends one rate refresh at once, rather than
    leaving every fiat price refused until the schedule's first interval has passed. It is the
    schedule's own work (payments.rates_refresh, no arguments): its lease keeps it from running
    twice alongside the first scheduled send."""
    from payments.tasks import rates_refresh

    try:
        rates_refresh.apply_async()
    except Exception:  # the broker down must not stop beat; the schedule sends the next one
        logger.warning("could not send the first rate refresh", exc_info=True)


@signals.worker_init.connect
def _serve_metrics(**kwargs) -> None:
    """The worker's main process serves its pool's figures on METRICS_PORT, when set."""
    from core import metrics

    metrics.serve_own_port("worker")


@signals.task_failure.connect
def _count_task_failure(sender=None, **kwargs) -> None:
    from core import metrics

    metrics.task_failures.labels(getattr(sender, "name", "unknown")).inc()


@signals.worker_process_shutdown.connect
def _metrics_process_dead(pid=None, **kwargs) -> None:
    from core import metrics

    metrics.process_dead(pid or os.getpid())


@signals.task_prerun.connect
def _task_in_logs(sender=None, task_id=None, **kwargs) -> None:
    from core.requests import current_task

    current_task.set((getattr(sender, "name", "?"), task_id))


@signals.task_postrun.connect
def _task_out_of_logs(**kwargs) -> None:
    from core.requests import current_task

    current_task.set(None)


def _logging_as_configured(**kwargs) -> None:
    """LOG_FORMAT=json: the worker and beat log as the web does (LOGGING: one JSON object per
    line, with the task's name and id), instead of in Celery's own format."""
    import logging.config

    from django.conf import settings

    logging.config.dictConfig(settings.LOGGING)


def _stdout_as_log_lines(**kwargs) -> None:
    """LOG_FORMAT=json: what a worker writes to its standard output rather than through logging
    (Celery's shutdown notices, written from signal handlers where logging could deadlock, its
    banner without --quiet, a print) reaches the log as JSON lines too. Standard output becomes
    a pipe: a write to it stays a plain write, safe in a signal handler, and a thread of the
    worker's main process logs each line it reads."""
    read_end, write_end = os.pipe()
    sys.stdout.flush()
    os.dup2(write_end, sys.__stdout__.fileno() if sys.__stdout__ else 1)
    os.close(write_end)
    threading.Thread(target=_log_lines, args=(read_end,), name="stdout-as-log", daemon=True).start()


def _log_lines(read_end: int) -> None:
    out = logging.getLogger("celery.worker")
    with open(read_end, encoding="utf-8", errors="replace") as lines:
        for line in lines:
            if line.strip():
                out.info("%s", line.strip())


if os.environ.get("LOG_FORMAT") == "json":  # a receiver here means Celery leaves logging alone
    signals.setup_logging.connect(_logging_as_configured, weak=False)
    signals.worker_init.connect(_stdout_as_log_lines, weak=False)


@signals.worker_ready.connect
@signals.beat_init.connect
def _report_started(sender=None, **kwargs) -> None:
    logger.info("started with recursion limit %d", sys.getrecursionlimit())


@signals.worker_ready.connect
@signals.beat_init.connect
def _clear_leases_of_dead_processes(**kwargs) -> None:
    """A worker or beat restarted on this host takes up the work its killed predecessor held at
    once, rather than after the lease (core/leases.py)."""
    from core.leases import leases_clear_dead

    try:
        leases_clear_dead()
    except Exception:  # the database away: the leases expire by themselves
        logger.warning("could not clear the leases of processes gone", exc_info=True)


# Workers heal after a database restart: CELERY_DB_REUSE_MAX keeps connections across tasks
# (a measured speed-up), so a connection that died while idle would fail every later task of
# its process. Before and after every task, Django's own check closes a connection that has
# errors or outlived CONN_MAX_AGE, and CONN_HEALTH_CHECKS pings a kept one before its first
# use in the task: the next query opens a fresh connection.
@signals.task_prerun.connect
@signals.task_postrun.connect
def _close_broken_connections(sender=None, **kwargs) -> None:
    from django.db import close_old_connections

    if getattr(getattr(sender, "request", None), "is_eager", False):
        return  # run in the caller's process (apply, eager mode): its connection is the caller's
    close_old_connections()


@signals.task_failure.connect
def _discard_connection_after_database_error(sender=None, exception=None, **kwargs) -> None:
    """A task that failed on the database leaves no broken connection for the next one. Logged at
    ERROR with a stable message ("task failed on the database"), one line per failure."""
    from core.sql.dbconn import discard_broken_connections, is_connection_error

    if is_connection_error(exception):
        logger.error("task failed on the database: %s %s", getattr(sender, "name", "?"), type(exception).__name__)
        discard_broken_connections()


@app.task(name="config.heartbeat", ignore_result=True)
def heartbeat() -> None:
    """Run by a worker: it is alive and reaches the queue (read by /healthz)."""
    from core.heartbeats import WORKER, heartbeat_note

    heartbeat_note(WORKER)


@signals.before_task_publish.connect(sender="config.heartbeat")
def _beat_tick(**kwargs) -> None:
    """In beat, as it sends the heartbeat: beat is alive and ticking (read by /healthz)."""
    from core.heartbeats import BEAT, heartbeat_note

    try:
        heartbeat_note(BEAT)
    except Exception:  # the cache down must not stop beat sending the rest of its schedule
        logger.warning("could not note the beat heartbeat", exc_info=True)
