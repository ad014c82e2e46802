"""Chunks carry a hash of the text their model read, so the same text is embedded once."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('wiki', '0013_page_chunks'),
    ]

    operations = [
        migrations.AddField(
            model_name='pagechunk',
            name='text_hash',
            field=models.CharField(blank=True, default='', max_length=64),
        ),
        migrations.AddIndex(
            model_name='pagechunk',
            index=models.Index(fields=['model', 'text_hash'], name='pagechunk_model_text_hash'),
        ),
    ]
