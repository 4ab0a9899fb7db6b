"""Run as a script against an SQLite database (see test_delivery_on_sqlite.py): one account's
endpoint refuses every connection and has 250 deliveries due, all older than another
account's one; one dispatcher tick runs, its attempts made as the Celery worker starts them.
Prints what each endpoint got in that tick."""

from __future__ import annotations

import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import transaction  # noqa: E402

from accounts.models import User  # noqa: E402
from tests.webhooks.conftest import refusing_endpoint  # noqa: E402
from webhooks import attempts as webhook_attempts  # noqa: E402
from webhooks import endpoints, services  # noqa: E402
from webhooks.models import DeliveryAttempt, EventType  # noqa: E402

received: list[str] = []


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (http.server's name)
        received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"])))["data"]["draftId"])
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
call_command("migrate", verbosity=0)
backlogged = User.objects.create_user("c@example.com", "a long enough passphrase")
other = User.objects.create_user("b@example.com", "a long enough passphrase")
with refusing_endpoint() as refusing_url:
    refusing = endpoints.webhook_create(user=backlogged, url=refusing_url, events=[])
    endpoints.webhook_create(user=other, url=f"http://127.0.0.1:{server.server_port}/hooks", events=[])
    for n in range(250):  # one transaction each, as 250 drafts would
        with transaction.atomic():
            services.event_record(user=backlogged, type=EventType.DRAFT_SEEN, data={"draftId": f"c{n}"})
    with transaction.atomic():
        services.event_record(user=other, type=EventType.DRAFT_SEEN, data={"draftId": "b1"})

    attempts = [
        webhook_attempts.delivery_attempt(attempt_id=attempt_id) for attempt_id in services.deliveries_dispatch()
    ]
json.dump(
    {
        "received": received,
        "refusing_attempts": sum(a.delivery.webhook_id == refusing.id for a in attempts),
        "refused": sorted({a.status_code for a in attempts if a.delivery.webhook_id == refusing.id}, key=str),
        "attempts": DeliveryAttempt.objects.count(),
    },
    sys.stdout,
)
server.shutdown()
