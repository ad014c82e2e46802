from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("reviews", "0008_nobody_decides"),
    ]

    operations = [
        migrations.AddField(
            model_name="notification",
            name="message_id",
            field=models.CharField(blank=True, default="", max_length=200),
        ),
    ]
