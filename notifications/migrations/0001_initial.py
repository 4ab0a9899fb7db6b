# The email outbox and the preference move here from webhooks, keeping their data.
# NotificationPreference keeps its table (renamed); EmailNotification gets a new shape
# (an address and a context instead of links to webhook rows), so its rows are copied
# (0002) before webhooks drops the old table.

import uuid

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ("webhooks", "0002_notificationpreference_webhook_delivery_and_more"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="NotificationPreference",
                    fields=[
                        (
                            "user",
                            models.OneToOneField(
                                on_delete=django.db.models.deletion.CASCADE,
                                primary_key=True,
                                related_name="notification_preference",
                                serialize=False,
                                to=settings.AUTH_USER_MODEL,
                            ),
                        ),
                        ("email_enabled", models.BooleanField(default=True)),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                    ],
                    options={"db_table": "webhooks_notificationpreference"},
                ),
            ],
            database_operations=[],
        ),
        migrations.AlterModelTable(name="notificationpreference", table=None),
        migrations.CreateModel(
            name="EmailNotification",
            fields=[
                ("id", models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ("to", models.EmailField(max_length=254)),
                ("kind", models.CharField(max_length=64)),
                ("context", models.JSONField(blank=True, default=dict)),
                ("dedup_key", models.CharField(blank=True, max_length=200, null=True)),
                (
                    "status",
                    models.CharField(
                        choices=[("Pending", "Pending"), ("Sending", "Sending"), ("Sent", "Sent"), ("Failed", "Failed")],
                        default="Pending",
                        max_length=16,
                    ),
                ),
                ("attempt_count", models.PositiveIntegerField(default=0)),
                ("next_attempt_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("claimed_at", models.DateTimeField(blank=True, null=True)),
                ("sent_at", models.DateTimeField(blank=True, null=True)),
                ("last_error", models.CharField(blank=True, default="", max_length=500)),
                ("created_at", models.DateTimeField(db_index=True, default=django.utils.timezone.now)),
                (
                    "user",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="email_notifications",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at"],
                "indexes": [
                    models.Index(
                        condition=models.Q(("status", "Pending")),
                        fields=["next_attempt_at"],
                        name="notifications_email_due",
                    )
                ],
                "constraints": [
                    models.UniqueConstraint(fields=("dedup_key",), name="notifications_email_once_per_key")
                ],
            },
        ),
    ]
