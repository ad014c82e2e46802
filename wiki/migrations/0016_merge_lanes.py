"""Joins three migrations written side by side: sibling order and form-token cleanup, the
embedding's text hash, and the CJK index with the tree key's statistics. No operations."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [
        ("wiki", "0015_form_submission_created_at"),
        ("wiki", "0014_pagechunk_text_hash"),
        ("wiki", "0015_page_tree_key_statistics"),
    ]

    operations: list[migrations.operations.base.Operation] = []
