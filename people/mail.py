"""What the invitation email says: who invited you and how to get in."""

from __future__ import annotations

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
