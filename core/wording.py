"""A message in the language in force that remembers how it was worded, so what keeps it (a
recurring run's refusal, recorded by a worker in English) can word it again later in its
reader's language.

    raise Problem(worded(gettext_noop("The amount is more than %(amount)s."), amount="21,000,000 BTC"))

`gettext_noop` (by that name: makemessages looks for it) marks the message for the catalogs;
`worded` translates it now (the request's language: the account's on its pages, English on the
API and MCP) and keeps the message id and its values. `wording_record` turns it into JSON, `reworded` back into text in
the language in force. A value may itself be worded (an address error inside "on Ethereum").
"""

from __future__ import annotations

from typing import Any

from django.utils.translation import gettext

__all__ = ["Worded", "reworded", "worded", "wording_record"]


class Worded(str):
    """The text in the language in force, with the message id and values it was made of."""

    msgid: str
    params: dict[str, Any]


def worded(msgid: str, **params: Any) -> Worded:
    text = gettext(msgid) % params if params else gettext(msgid)
    made = Worded(text)
    made.msgid, made.params = msgid, params
    return made


def wording_record(text: object) -> dict[str, Any] | None:
    """JSON that `reworded` turns back into the text (in the language then in force), or None
    when the text was not worded (written in English only)."""
    if not isinstance(text, Worded):
        return None
    params = {key: wording_record(value) or value for key, value in text.params.items()}
    return {
        "msgid": text.msgid,
        "params": {key: value if isinstance(value, dict | int) else str(value) for key, value in params.items()},
    }


def reworded(record: Any) -> str | None:
    """The text a `wording_record` keeps, in the language in force; None for anything else."""
    if not isinstance(record, dict) or not isinstance(record.get("msgid"), str):
        return None
    params = {
        key: (reworded(value) or "") if isinstance(value, dict) else value
        for key, value in (record.get("params") or {}).items()
    }
    try:
        return gettext(record["msgid"]) % params if params else gettext(record["msgid"])
    except (KeyError, TypeError, ValueError):  # a message changed since it was kept
        return None
