"""`manage.py listen --forward-to http://localhost:3000/hook`: the API key's events, forwarded
to a local URL as signed deliveries (webhooks/forwarding.py; docs/webhooks.md, Local development)."""

from __future__ import annotations

import os
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from webhooks import signing
from webhooks.forwarding import ApiRefused, Forwarder
from webhooks.models import EventType


class Command(BaseCommand):
    help = (
        "Forward the API key's events (from now on) to a local URL, signed like webhook deliveries "
        "with a forwarding secret this prints. Reads them over the API (long poll), so it also runs "
        "on another machine than the service."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--forward-to", required=True, help="Where to POST each event, e.g. http://localhost:3000/hook"
        )
        parser.add_argument(
            "--api-key",
            default=os.environ.get("PAYMENT_DRAFTS_API_KEY", ""),
            help="An API key with scope events:read (default: $PAYMENT_DRAFTS_API_KEY); "
            "a test key forwards test events",
        )
        parser.add_argument(
            "--api-url",
            default=os.environ.get("PAYMENT_DRAFTS_URL", settings.BASE_URL),
            help="The service (default: $PAYMENT_DRAFTS_URL, else the BASE_URL setting)",
        )
        parser.add_argument(
            "--secret",
            default=os.environ.get("LISTEN_FORWARDING_SECRET", ""),
            help="The forwarding secret (whsec_...) to sign with; default: a new one, printed at start",
        )
        parser.add_argument("--events", default="", help="Only these event types, separated by commas")
        parser.add_argument("--count", type=int, default=None, help="Stop after forwarding this many events")

    def handle(
        self,
        *args: Any,
        forward_to: str,
        api_key: str,
        api_url: str,
        secret: str,
        events: str,
        count: int | None,
        **options: Any,
    ) -> None:
        if not api_key:
            raise CommandError("Give an API key with scope events:read: --api-key or $PAYMENT_DRAFTS_API_KEY.")
        if not all(url.startswith(("http://", "https://")) for url in (forward_to, api_url)):
            raise CommandError("--forward-to and --api-url must be http:// or https:// URLs.")
        if secret and not secret.startswith(signing.SECRET_PREFIX):
            raise CommandError("--secret must look like whsec_... (as `manage.py listen` prints one).")
        types = [name.strip() for name in events.split(",") if name.strip()]
        unknown = sorted(set(types) - set(EventType.values))
        if unknown:
            raise CommandError(f"Unknown event types {unknown}; known: {', '.join(EventType.values)}")
        secret = secret or signing.secret_generate()
        forwarder = Forwarder(api_url=api_url, api_key=api_key, forward_to=forward_to, secret=secret, types=types)
        try:
            cursor = forwarder.newest()
            self.stdout.write(f"Ready. Forwarding the events of this key to {forward_to}")
            self.stdout.write(f"Your forwarding secret is {secret} (verify X-Service-Signature with it)")
            self.stdout.flush()
            forwarded = 0
            for item in forwarder.events(cursor):
                done = forwarder.forward(item)
                outcome = f"[{done.status}]" if done.status is not None else f"[no answer: {done.error}]"
                self.stdout.write(
                    f"{item['createdAt']}  {item['event']:<28} {item['id']}  seq {item['sequence']}  "
                    f"--> {outcome} {done.duration_ms} ms"
                )
                self.stdout.flush()
                forwarded += 1
                if count is not None and forwarded >= count:
                    return
        except ApiRefused as exc:
            raise CommandError(f"The service refused: {exc}") from exc
        except KeyboardInterrupt:
            return
