"""Primary keys that follow the time of their creation, for tables that grow without end."""

from __future__ import annotations

import uuid

from uuid_utils import compat


def time_ordered_uuid() -> uuid.UUID:
    """A UUID of version 7 (RFC 9562): 48 bits of the time in milliseconds, then 74 random bits.

    A new row's key lands next to the previous ones in the primary key's index, on a page that is
    in memory, instead of on a random page of it: at ten million drafts a random (version 4) key
    made one creation in a few dozen read a leaf page from disk (33 ms each, measured with
    auto_explain; docs/performance.md). Still unguessable (74 random bits); the time it reveals is
    the draft's own `createdAt`."""
    return compat.uuid7()


def short_id(value: object) -> str:
    """The last 8 characters of an id, as pages and email subjects show it beside the whole id's
    link: the random end, where a time-ordered id's start is its time, the same for every draft
    made within the same minute."""
    return str(value)[-8:]
