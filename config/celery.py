import logging
import os
import sys

from celery import Celery, signals

from config.env import load_local_env

load_local_env()
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("config")
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


# Workers heal after a database restart: CELERY_DB_REUSE_MAX keeps connections across tasks
# (a measured speed-up), so a connection that died while idle would fail every later task of
# its process. Before and after every task, Django's own check closes a connection that has
# errors or outlived CONN_MAX_AGE, and CONN_HEALTH_CHECKS pings a kept one before its first
# use in the task: the next query opens a fresh connection.
@signals.task_prerun.connect
@signals.task_postrun.connect
def _close_broken_connections(**kwargs) -> None:
    from django.db import close_old_connections

    close_old_connections()


@signals.task_failure.connect
def _discard_connection_after_database_error(sender=None, exception=None, **kwargs) -> None:
    """A task that failed on the database leaves no broken connection for the next one. Logged at
    ERROR with a stable message ("task failed on the database"), one line per failure."""
    from config.dbconn import discard_broken_connections, is_connection_error

    if is_connection_error(exception):
        logger.error("task failed on the database: %s %s", getattr(sender, "name", "?"), type(exception).__name__)
        discard_broken_connections()


@app.task(name="config.heartbeat", ignore_result=True)
def heartbeat() -> None:
    """Run by a worker: it is alive and reaches the queue (read by /healthz)."""
    from config.heartbeats import WORKER, heartbeat_note

    heartbeat_note(WORKER)


@signals.before_task_publish.connect(sender="config.heartbeat")
def _beat_tick(**kwargs) -> None:
    """In beat, as it sends the heartbeat: beat is alive and ticking (read by /healthz)."""
    from config.heartbeats import BEAT, heartbeat_note

    try:
        heartbeat_note(BEAT)
    except Exception:  # the cache down must not stop beat sending the rest of its schedule
        logger.warning("could not note the beat heartbeat", exc_info=True)
