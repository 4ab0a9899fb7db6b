"""Run as a script against an SQLite database (see test_delivery_on_sqlite.py): records two
(or EVENTS) events for an endpoint served on 127.0.0.1, runs the dispatcher and a delivery task's lane as
the Celery task does (or, with PASS_SECONDS, one dispatcher pass claiming for that long, its
claims POLL_SECONDS apart), and prints what the receiver got and what the outbox recorded."""

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
from webhooks import lanes, passes, services, signing  # noqa: E402
from webhooks.models import Delivery, DeliveryAttempt, EventType, Webhook  # noqa: E402

received: list[str] = []


class Handler(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 (http.server's name)
        received.append(self.rfile.read(int(self.headers["Content-Length"])).decode())
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=server.serve_forever, daemon=True).start()
call_command("migrate", verbosity=0)
user = User.objects.create_user("hooks@example.com", "a long enough passphrase")
Webhook.objects.create(
    user=user, url=f"http://127.0.0.1:{server.server_port}/hooks", events=[], secret=signing.secret_generate()
)
with transaction.atomic():
    for n in range(int(os.environ.get("EVENTS", "2"))):
        services.event_record(user=user, type=EventType.DRAFT_EXPIRED, data={"n": n})
if "PASS_SECONDS" in os.environ:
    passes.POLL_SECONDS = float(os.environ["POLL_SECONDS"])
    made = passes.pass_run(seconds=float(os.environ["PASS_SECONDS"])).attempts
else:
    attempt_ids = services.deliveries_dispatch(enqueue=False)
    made = sum(lanes.lane_run(attempt_id=attempt_id) for attempt_id in attempt_ids)
json.dump(
    {
        "made": made,
        "received": len(received),
        "deliveries": sorted(Delivery.objects.values_list("status", flat=True)),
        "attempts": sorted(DeliveryAttempt.objects.values_list("state", "status_code")),
    },
    sys.stdout,
)
server.shutdown()
