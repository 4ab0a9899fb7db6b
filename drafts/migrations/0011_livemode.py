from django.db import migrations, models


def demo_drafts_are_test_drafts(apps, schema_editor):
    # The demo's drafts live on test networks and are paid by the test helpers: test mode.
    apps.get_model("drafts", "Draft").objects.filter(origin="Demo").update(livemode=False)


class Migration(migrations.Migration):
    dependencies = [
        ("drafts", "0010_quote_sources"),
    ]

    operations = [
        migrations.AddField(
            model_name="draft",
            name="livemode",
            field=models.BooleanField(default=True),
        ),
        migrations.RunPython(demo_drafts_are_test_drafts, migrations.RunPython.noop),
    ]
