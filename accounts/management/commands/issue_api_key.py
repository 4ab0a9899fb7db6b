from __future__ import annotations

from datetime import timedelta

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.core.validators import validate_email
from django.utils import timezone

from accounts.scopes import ALL_SCOPES
from accounts.services import api_key_create, user_get_or_create
from core.problems import Problem


class Command(BaseCommand):
    help = "Create an API key (and the account if missing). Prints only the key on stdout."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--email", required=True)
        parser.add_argument("--scopes", required=True, help=f"Comma-separated, from: {','.join(ALL_SCOPES)}")
        parser.add_argument("--name", default="")
        parser.add_argument("--expires-in-days", type=int, default=None)
        parser.add_argument(
            "--test-mode",
            action="store_true",
            help="A test key (pdk_test_...): only test objects, on test networks; payments simulated on demand",
        )

    def handle(
        self, *args, email: str, scopes: str, name: str, expires_in_days: int | None, test_mode: bool = False, **options
    ) -> None:
        try:
            validate_email(email)
        except ValidationError as exc:
            raise CommandError(f"Not an email address: {email!r}") from exc
        wanted = [scope.strip() for scope in scopes.split(",") if scope.strip()]
        unknown = sorted(set(wanted) - set(ALL_SCOPES))
        if not wanted or unknown:
            raise CommandError(f"Unknown or missing scopes {unknown}; choose from {', '.join(ALL_SCOPES)}")
        if expires_in_days is not None and expires_in_days < 1:
            raise CommandError("--expires-in-days must be at least 1")
        expires_at = timezone.now() + timedelta(days=expires_in_days) if expires_in_days else None
        try:
            issued = api_key_create(
                user=user_get_or_create(email=email),
                name=name,
                scopes=wanted,
                expires_at=expires_at,
                livemode=not test_mode,
            )
        except Problem as problem:
            raise CommandError(problem.detail) from None
        self.stdout.write(issued.key)
