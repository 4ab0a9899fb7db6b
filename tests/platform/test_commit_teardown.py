"""What a test that commits leaves behind is gone before the next test (tests/flush.py deletes
the rows of every table that holds any, content types and permissions kept). The two tests run
in this order: the file runs whole on one worker (`--dist loadfile`)."""

from __future__ import annotations

import pytest
from django.contrib.contenttypes.models import ContentType

from accounts.models import User
from drafts.models import Draft
from tests.factories import make_draft
from webhooks.models import Event

pytestmark = pytest.mark.django_db(transaction=True)

EMAIL = "teardown@example.com"


def test_a_test_that_commits_writes_rows_in_several_tables():
    user = User.objects.create_user(EMAIL, "a long passphrase")
    make_draft(user)
    Event.objects.create(user=user, type="draft.created", data={"id": "x"})
    assert Draft.objects.count() == 1


def test_the_next_test_finds_them_gone_and_the_content_types_kept():
    assert not User.objects.filter(email=EMAIL).exists()
    assert Draft.objects.count() == 0 and Event.objects.count() == 0
    assert ContentType.objects.filter(app_label="drafts", model="draft").exists()
