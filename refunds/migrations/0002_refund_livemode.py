from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def from_drafts(apps, schema_editor):
    """An existing refund lives in the mode of the draft it gives back."""
    Refund = apps.get_model("refunds", "Refund")
    Draft = apps.get_model("drafts", "Draft")
    Refund.objects.update(livemode=Subquery(Draft.objects.filter(pk=OuterRef("draft_id")).values("livemode")[:1]))


class Migration(migrations.Migration):
    dependencies = [
        ("refunds", "0001_refunds"),
    ]

    operations = [
        migrations.AddField(
            model_name="refund",
            name="livemode",
            field=models.BooleanField(default=True),
        ),
        migrations.RunPython(from_drafts, migrations.RunPython.noop),
    ]
