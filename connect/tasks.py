"""Periodic clean-up of OAuth clients: the task takes no input and calls one service."""

from datetime import timedelta

from celery import shared_task
from django.conf import settings

from connect import services


@shared_task
def delete_unused_clients() -> int:
    return services.clients_delete_unused(
        older_than=timedelta(hours=settings.QUIRE_OAUTH_UNUSED_CLIENT_HOURS)
    )
