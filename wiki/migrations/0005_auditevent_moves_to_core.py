# The audit trail moves to the core app; its table stays (core.AuditEvent keeps db_table).

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("wiki", "0004_indexes"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[migrations.DeleteModel(name="AuditEvent")],
            database_operations=[],
        ),
    ]
