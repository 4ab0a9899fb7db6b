# Copies the email outbox rows from webhooks into the new table, so pending emails still go
# out and the history stays. A draft event's email carries the event in its context.

from django.db import migrations


def copy_forward(apps, schema_editor):
    Old = apps.get_model("webhooks", "EmailNotification")
    New = apps.get_model("notifications", "EmailNotification")
    batch = []
    for old in Old.objects.select_related("user", "event").iterator(chunk_size=500):
        if old.kind == "draft_event" and old.event is not None:
            context = {"event": old.event.type, "data": old.event.data}
            dedup_key = f"event:{old.event_id}"
        else:
            context, dedup_key = old.context, None
        batch.append(
            New(
                id=old.id,
                user_id=old.user_id,
                to=old.user.email,
                kind=old.kind,
                context=context,
                dedup_key=dedup_key,
                status=old.status,
                attempt_count=old.attempt_count,
                next_attempt_at=old.next_attempt_at,
                claimed_at=old.claimed_at,
                sent_at=old.sent_at,
                last_error=old.last_error,
                created_at=old.created_at,
            )
        )
        if len(batch) >= 500:
            New.objects.bulk_create(batch, ignore_conflicts=True)
            batch = []
    New.objects.bulk_create(batch, ignore_conflicts=True)


def copy_backward(apps, schema_editor):
    Old = apps.get_model("webhooks", "EmailNotification")
    New = apps.get_model("notifications", "EmailNotification")
    for new in New.objects.filter(user__isnull=False, kind__in=["draft_event", "webhook_disabled"]).iterator():
        event_id = new.dedup_key.removeprefix("event:") if new.dedup_key else None
        Old.objects.update_or_create(
            id=new.id,
            defaults={
                "user_id": new.user_id,
                "kind": new.kind,
                "event_id": event_id,
                "context": {} if event_id else new.context,
                "status": new.status,
                "attempt_count": new.attempt_count,
                "next_attempt_at": new.next_attempt_at,
                "claimed_at": new.claimed_at,
                "sent_at": new.sent_at,
                "last_error": new.last_error,
                "created_at": new.created_at,
            },
        )


class Migration(migrations.Migration):
    dependencies = [
        ("notifications", "0001_initial"),
        ("webhooks", "0002_notificationpreference_webhook_delivery_and_more"),
    ]

    operations = [migrations.RunPython(copy_forward, copy_backward)]
