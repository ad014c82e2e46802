# The audit trail moved here from the wiki app: the table stays, only Django's state moves.

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True

    dependencies = [
        ("agents", "0002_initial"),
        ("wiki", "0005_auditevent_moves_to_core"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="AuditEvent",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                        ("at", models.DateTimeField(auto_now_add=True, db_index=True)),
                        ("action", models.CharField(db_index=True, max_length=60)),
                        ("version_number", models.PositiveIntegerField(blank=True, null=True)),
                        ("outcome", models.CharField(default="ok", max_length=40)),
                        ("comment", models.TextField(blank=True, default="")),
                        ("duration_ms", models.PositiveIntegerField(blank=True, null=True)),
                        ("data", models.JSONField(blank=True, default=dict)),
                        ("actor_agent", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to="agents.agent")),
                        ("actor_user", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
                        ("page", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to="wiki.page")),
                    ],
                    options={"ordering": ["-at", "-id"], "db_table": "wiki_auditevent"},
                ),
            ],
            database_operations=[],
        ),
        migrations.AddField(
            model_name="auditevent",
            name="actor_system",
            field=models.CharField(blank=True, default="", max_length=100),
        ),
    ]
