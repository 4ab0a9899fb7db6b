"""Settings read through object's own look-up (core.sql.framework.settings_reads_tune) give
what Django's LazyObject look-up gives, and follow override_settings and assignments."""

from __future__ import annotations

import pytest
from django.conf import LazySettings, settings
from django.test import override_settings
from django.utils.functional import LazyObject

from core.sql.framework import settings_reads_tune


def test_the_settings_object_uses_objects_own_look_up():
    assert LazySettings.__getattribute__ is object.__getattribute__
    settings_reads_tune()  # once more changes nothing
    assert LazySettings.__getattribute__ is object.__getattribute__


def test_every_setting_reads_as_djangos_own_look_up_gives_it():
    names = [name for name in dir(settings._wrapped) if name.isupper()]
    assert len(names) > 100
    for name in names:
        value = getattr(settings, name)  # read (and cached) through the tuned look-up
        assert LazyObject.__getattribute__(settings, name) is value, name
        assert value is getattr(settings._wrapped, name) or name in ("MEDIA_URL", "STATIC_URL"), name


def test_an_override_is_read_at_once_and_undone_after():
    before = settings.API_MAX_JSON_DEPTH
    with override_settings(API_MAX_JSON_DEPTH=before + 7):
        assert settings.API_MAX_JSON_DEPTH == before + 7
    assert settings.API_MAX_JSON_DEPTH == before


def test_a_setting_assigned_is_read_back_and_an_unknown_one_is_missing():
    with override_settings():
        settings.SOME_NEW_SETTING = "set"
        assert settings.SOME_NEW_SETTING == "set"
    with pytest.raises(AttributeError):
        settings.SOME_NEW_SETTING  # noqa: B018
    assert not hasattr(settings, "NO_SUCH_SETTING")


def test_the_settings_object_still_stands_for_the_wrapped_one():
    assert settings.configured
    assert repr(settings).startswith("<LazySettings ")
    assert settings.__class__ is type(settings._wrapped)
    assert str(settings) == str(settings._wrapped)
