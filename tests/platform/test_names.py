"""One naming style for Celery tasks and beat entries, and one UUID pattern for ids in URLs."""

import re

from django.conf import settings
from django.urls import get_resolver

from config.celery import app


def test_celery_tasks_are_named_app_dot_action():
    app.loader.import_default_modules()
    ours = [name for name in app.tasks if not name.startswith("celery.")]
    assert ours, "no task registered"
    assert [name for name in ours if not re.fullmatch(r"[a-z]+\.[a-z_]+", name)] == []


def test_beat_entries_are_lower_case_app_dash_what_and_name_registered_tasks():
    app.loader.import_default_modules()
    for name, entry in settings.CELERY_BEAT_SCHEDULE.items():
        assert re.fullmatch(r"[a-z]+(-[a-z0-9]+)+", name), name
        assert entry["task"] in app.tasks, entry["task"]


def _all_patterns(resolver, prefix=""):
    for entry in resolver.url_patterns:
        pattern = prefix + str(entry.pattern)
        if hasattr(entry, "url_patterns"):
            yield from _all_patterns(entry, pattern)
        else:
            yield pattern


def test_every_id_in_a_url_uses_the_one_uuid_pattern():
    from core.routing import UUID_PATTERN

    patterns = list(_all_patterns(get_resolver()))
    with_ids = [p for p in patterns if re.search(r"\(\?P<(pk|\w+_id)>|<\w+:\w+_id>", p) and "admin/" not in p]
    assert with_ids
    offenders = [p for p in with_ids if "<id:" not in p and not re.search(r"\(\?P<\w+>" + re.escape(UUID_PATTERN), p)]
    assert offenders == []
