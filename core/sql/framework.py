"""Django internals tuned once at start (core.apps.CoreConfig.ready), beside the driver's
(core.sql.driver).

Reading a setting (`settings.DEBUG`) runs `LazyObject.__getattribute__`, a Python function,
which also asks every value it finds for a `_mask_wrapped` attribute: for a string or a number
that raises and swallows an AttributeError, message formatted. A draft's creation through the
API reads settings about a hundred times (Django's handler and middleware, `timezone.now()`,
the rates and fees): 3.4% of its instructions, and 3.3% of a read's, went to that function.

`settings_reads_tune` makes the settings object (`LazySettings`) use `object`'s own attribute
look-up: a cached setting comes from its `__dict__`, one not read yet (or cleared by
`override_settings`) still goes to `LazySettings.__getattr__`, which reads and caches it, as
before. The one difference: `_mask_wrapped` made a LazyObject proxy method named explicitly
(`settings.__iter__`, `hasattr(settings, "__len__")`) the wrapped Settings' own, or missing;
now it is the proxy. Operators (`str(settings)`, `==`) go through the type either way, and
nothing in the project or its dependencies asks settings for a dunder by name.
tests/platform/test_settings_reads.py holds the rest to Django's own.
"""

from __future__ import annotations


def settings_reads_tune() -> None:
    from django.conf import LazySettings

    LazySettings.__getattribute__ = object.__getattribute__
