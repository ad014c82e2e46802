"""Pages cut into chunks along their headings, with their embeddings (wiki/semantic.py);
on PostgreSQL with pgvector, a vector column with an HNSW index."""

import django.db.models.deletion
from django.db import migrations, models


def use_pgvector(apps, schema_editor):
    from wiki.semantic import enable_pgvector

    enable_pgvector(schema_editor.connection)


class Migration(migrations.Migration):

    dependencies = [
        ('wiki', '0012_page_archived_with'),
    ]

    operations = [
        migrations.CreateModel(
            name='PageChunk',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('position', models.PositiveIntegerField()),
                ('heading', models.TextField(blank=True, default='')),
                ('text', models.TextField()),
                ('model', models.CharField(blank=True, default='', max_length=300)),
                ('vector', models.BinaryField(null=True)),
                ('page', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='chunks', to='wiki.page')),
                ('version', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='wiki.version')),
            ],
            options={
                'constraints': [models.UniqueConstraint(fields=('page', 'position'), name='pagechunk_unique_position')],
            },
        ),
        migrations.RunPython(use_pgvector, migrations.RunPython.noop),
    ]
