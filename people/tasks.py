"""People tasks: each calls one function. The invitation email's task sits with the email,
in people.mail, so that people.services queues it without importing this module."""

from celery import shared_task

from people import services


@shared_task
def recheck_sso_identities() -> dict[str, int]:
    return services.sso_recheck_all()
