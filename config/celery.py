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
