"""The shared counters' table, used when Redis is not configured or not answering."""

from django.db import models


class Counter(models.Model):
    """A named count that expires (a rate-limit window, a run of failed logins).

    Written only by config/cache.py with one atomic upsert per hit.
    """

    name = models.CharField(max_length=250, primary_key=True)
    value = models.IntegerField()
    expires_at = models.FloatField(db_index=True, help_text="Unix time.")

    class Meta:
        db_table = "quire_counter"

    def __str__(self) -> str:
        return f"{self.name} = {self.value}"
