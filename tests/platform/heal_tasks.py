"""A task for the worker-healing test: one query through Django's connection, and a note of
which worker process answered (in the test's own Redis, HEAL_RESULTS_URL)."""

import os
import time

import redis
from celery import shared_task
from django.db import connection


@shared_task(name="tests.heal.touch", ignore_result=True)
def touch() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        cursor.fetchone()
    redis.Redis.from_url(os.environ["HEAL_RESULTS_URL"]).rpush("ok", f"{os.getpid()} {time.time()}")
    time.sleep(0.02)
