"""Run as a script against an SQLite database (see test_delivery_on_sqlite.py): an endpoint
fails its first delivery, then answers again; a delivery task's lane goes on through its
four due deliveries as the Celery task does (one attempt at a time on SQLite). Prints what
the receiver got and what the outbox recorded."""

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
from webhooks import endpoints, lanes, services  # noqa: E402
from webhooks.models import Delivery, DeliveryAttempt, EventType  # noqa: E402

received: list[str] = []


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (http.server's name)
        received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"])))["data"]["draftId"])
        self.send_response(500 if len(received) == 1 else 200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
call_command("migrate", verbosity=0)
user = User.objects.create_user("hooks@example.com", "a long enough passphrase")
webhook = endpoints.webhook_create(user=user, url=f"http://127.0.0.1:{server.server_port}/hooks", events=[])
with transaction.atomic():
    for n in range(4):
        services.event_record(user=user, type=EventType.DRAFT_SEEN, data={"draftId": f"d{n}"})
[first] = services.deliveries_dispatch(enqueue=False)  # WEBHOOKS_MAX_IN_FLIGHT_PER_ENDPOINT=1
made = lanes.lane_run(attempt_id=first)  # fails, then healthy again after its second attempt
webhook.refresh_from_db()
json.dump(
    {
        "made": made,
        "received": received,
        "deliveries": sorted(Delivery.objects.values_list("status", flat=True)),
        "attempts": sorted(DeliveryAttempt.objects.values_list("state", "status_code")),
        "failing": webhook.last_failure_at is not None,
    },
    sys.stdout,
)
server.shutdown()
