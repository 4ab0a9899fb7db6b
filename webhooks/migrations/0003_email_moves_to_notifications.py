# The email outbox and the preference now live in notifications (its 0001 takes over the
# preference table, its 0002 copies the outbox rows); webhooks forgets them.

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("webhooks", "0002_notificationpreference_webhook_delivery_and_more"),
        ("notifications", "0002_copy_webhooks_emails"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="NotificationPreference")],
            database_operations=[],
        ),
        migrations.DeleteModel(name="EmailNotification"),
    ]
