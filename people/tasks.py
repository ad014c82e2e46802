"""People tasks: each fetches an id and calls one function."""

from smtplib import SMTPException

from celery import Task, shared_task
from django.contrib.auth.models import User

from people import mail, services


@shared_task(
    bind=True,
    autoretry_for=(SMTPException, OSError),
    retry_backoff=True,
    retry_backoff_max=600,
    max_retries=10,
    acks_late=True,
)
def send_invitation(self: Task, user_id: int) -> bool:
    person = User.objects.filter(pk=user_id, is_active=True).first()
    if person is None:
        return False
    mail.invitation(person).send()
    return True


@shared_task
def recheck_sso_identities() -> dict[str, int]:
    return services.sso_recheck_all()
