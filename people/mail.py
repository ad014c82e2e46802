"""What the invitation email says: who invited you and how to get in."""

from __future__ import annotations

from smtplib import SMTPException

from celery import Task, shared_task
from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.auth.tokens import default_token_generator
from django.core.mail import EmailMessage
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode


def set_password_link(person: User) -> str:
    uid = urlsafe_base64_encode(force_bytes(person.pk))
    token = default_token_generator.make_token(person)
    return settings.QUIRE_BASE_URL + reverse(
        "people:set_password", kwargs={"uidb64": uid, "token": token}
    )


def invitation(person: User) -> EmailMessage:
    context = {
        "person": person,
        "local_passwords": settings.QUIRE_LOCAL_PASSWORDS,
        "set_password_link": set_password_link(person) if settings.QUIRE_LOCAL_PASSWORDS else "",
        "sso": bool(settings.OIDC_RP_CLIENT_ID),
        "provider": settings.QUIRE_OIDC_PROVIDER_NAME,
        "login_link": settings.QUIRE_BASE_URL + reverse("login"),
    }
    return EmailMessage(
        subject="You are invited to Quire",
        body=render_to_string("email/invitation.txt", context),
        to=[person.email],
    )


# Named as it was in people.tasks, so invitations queued before a deploy still go out.
@shared_task(
    bind=True,
    name="people.tasks.send_invitation",
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
    invitation(person).send()
    return True
