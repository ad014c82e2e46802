from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("config", "0001_cache_table")]

    operations = [
        migrations.CreateModel(
            name="Counter",
            fields=[
                ("name", models.CharField(max_length=250, primary_key=True, serialize=False)),
                ("value", models.IntegerField()),
                ("expires_at", models.FloatField(db_index=True, help_text="Unix time.")),
            ],
            options={"db_table": "quire_counter"},
        ),
    ]
