#!/usr/bin/env python
"""Fails when a string a payer reads is not translated into every language, or when a
compiled catalog (.mo) is older than its .po.

Run by `make lint`. It first refreshes the catalogs (locale/*/LC_MESSAGES/django.po) with
Django's makemessages, so a new or changed string in a payer template shows up as
untranslated here. A string is the payer's when one of its source references is under
PAYER_SOURCES; the dashboard's strings (DASHBOARD_SOURCES) are required only in the languages
listed in DASHBOARD_LANGUAGES, and elsewhere may stay untranslated (those pages stay English).

    scripts/check_translations.py            # check (after refreshing the .po files)
    scripts/check_translations.py --compile  # also write the .mo files (Babel, no msgfmt)
    scripts/check_translations.py --list de  # print the required strings still untranslated in de

Adding a string: mark it in the template or code, run this script, translate the new
entries in every locale/*/LC_MESSAGES/django.po, then run it with --compile and commit both.
"""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
from pathlib import Path

from babel.messages.mofile import read_mo, write_mo
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parent.parent
LOCALE = ROOT / "locale"
PAYER_SOURCES = (
    "paylinks/",
    "payments/formatting.py",
    "templates/emails/payment_receipt",
    "templates/drafts/",
    "drafts/documents.py",
    "refunds/templates/refunds/claim.html",
    "refunds/templates/refunds/page.html",
    "refunds/templates/refunds/not_found.html",
    "refunds/templates/refunds/busy.html",
    "refunds/views.py",
    "refunds/services.py",
    "core/problems.py",
    "core/api/problems.py",
    "payments/rates/feed.py",
    "templates/emails/refund_claim_link",
    "templates/404.html",
    "templates/403.html",
    "templates/500.html",
    "templates/errors/",
)
# The dashboard's and account pages' strings, required only in the languages those pages are
# offered in (DASHBOARD_LANGUAGES); elsewhere they may stay untranslated.
DASHBOARD_SOURCES = (
    "dashboard/",
    "accounts/",
    "templates/accounts/",
    "attention/",
    "refunds/templates/refunds/dashboard/",
    "refunds/forms.py",
    # The labels of the statuses, roles and choices the dashboard shows.
    "drafts/enums.py",
    "payments/enums.py",
    "refunds/models.py",
    "fees/models.py",
    "webhooks/models.py",
    "recurring/models.py",
    "addressbook/models.py",
    "core/text.py",
    "payments/formatting.py",
    # The domain's refusals a merchant's form shows (rendered in the request's language: English on
    # the API, the account's on its pages).
    "payments/addresses.py",
    "outbound/guard.py",
    "wallets/descriptors.py",
    "webhooks/endpoints.py",
    "addressbook/selectors.py",
    "addressbook/services.py",
    "drafts/planning.py",
    "chainwatch/unmatched.py",
    # A recurring run's refusal, worded again on the Recurring page and in its email.
    "recurring/presenters.py",
    # Every email a merchant's people read (the customer's are PAYER_SOURCES above).
    "templates/emails/_attention_kind",
    "templates/emails/attention_digest",
    "templates/emails/draft_event",
    "templates/emails/email_code",
    "templates/emails/payment_request_paid",
    "templates/emails/recurring_run_refused",
    "templates/emails/refund_claimed",
    "templates/emails/refund_paid",
    "templates/emails/security_notice",
    "templates/emails/team_invitation",
    "templates/emails/transfer_unmatched",
    "templates/emails/webhook_disabled",
)
IGNORED = ["--ignore=.venv", "--ignore=node_modules", "--ignore=var", "--ignore=tests", "--ignore=bench"]


def languages() -> tuple[list[str], set[str]]:
    """(every non-English locale, the locales the dashboard is offered in)."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    os.environ.setdefault("DATABASE_URL", "sqlite:///:memory:")
    import django
    from django.conf import settings
    from django.utils.translation import to_locale

    django.setup()
    others = [to_locale(code) for code, _name in settings.LANGUAGES if code != settings.LANGUAGE_CODE]
    return others, {to_locale(code) for code in settings.DASHBOARD_LANGUAGES}


def makemessages(locales: list[str]) -> None:
    # File names without line numbers: moving a line in a template leaves the catalogs as they are.
    args = [sys.executable, "manage.py", "makemessages", "--no-obsolete", "--add-location=file", *IGNORED]
    for locale in locales:
        args += ["-l", locale]
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings", "DATABASE_URL": "sqlite:///:memory:"}
    subprocess.run(args, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)  # noqa: S603 - our own manage.py


def is_payer(message) -> bool:
    return any(path.startswith(PAYER_SOURCES) for path, _line in message.locations)


def is_dashboard(message) -> bool:
    return any(path.startswith(DASHBOARD_SOURCES) for path, _line in message.locations)


def untranslated(catalog, *, dashboard: bool = False) -> list[str]:
    missing = []
    for message in catalog:
        if not message.id or not (is_payer(message) or (dashboard and is_dashboard(message))):
            continue
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        if message.fuzzy or not all(strings):
            missing.append(message.id if isinstance(message.id, str) else message.id[0])
    return missing


def compiled(po_path: Path) -> bytes:
    with po_path.open("rb") as po:
        catalog = read_po(po)
    out = io.BytesIO()
    write_mo(out, catalog, use_fuzzy=False)
    return out.getvalue()


def same_catalog(mo_path: Path, po_bytes: bytes) -> bool:
    if not mo_path.exists():
        return False
    with mo_path.open("rb") as mo:
        current = read_mo(mo)
    return _entries(current) == _entries(read_mo(io.BytesIO(po_bytes)))


def _entries(catalog) -> dict:
    def plain(value):
        return tuple(value) if isinstance(value, (list, tuple)) else value

    return {(plain(m.id), m.context): plain(m.string) for m in catalog if m.id}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--compile", action="store_true", help="write the .mo files")
    parser.add_argument("--list", metavar="LOCALE", help="print the required strings untranslated in LOCALE")
    args = parser.parse_args()
    locales, dashboard_locales = languages()
    makemessages(locales)
    failures = []
    for locale in locales:
        po_path = LOCALE / locale / "LC_MESSAGES" / "django.po"
        with po_path.open("rb") as po:
            catalog = read_po(po)
        missing = untranslated(catalog, dashboard=locale in dashboard_locales)
        if args.list == locale:
            for msgid in missing:
                print(msgid)
        if missing:
            failures.append(f"{locale}: {len(missing)} required strings untranslated, e.g. {missing[0]!r}")
        mo_path = po_path.with_suffix(".mo")
        mo_bytes = compiled(po_path)
        if args.compile:
            mo_path.write_bytes(mo_bytes)
        elif not same_catalog(mo_path, mo_bytes):
            failures.append(f"{locale}: {mo_path.relative_to(ROOT)} is not compiled from its .po (run with --compile)")
    for failure in failures:
        print(failure, file=sys.stderr)
    if failures:
        print("Translate them in locale/*/LC_MESSAGES/django.po (see this script's help).", file=sys.stderr)
        return 1
    print(f"Payer strings translated in {len(locales)} languages; catalogs compiled.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
