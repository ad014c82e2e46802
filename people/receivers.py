"""Each sign-in's session is remembered, so that ending a person's access can end it."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.signals import user_logged_in
from django.dispatch import receiver

from people import services


@receiver(user_logged_in)
def remember_session(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    session = getattr(request, "session", None)
    if session is None:
        return
    if session.session_key is None:
        session.save()
    services.session_record(user=user, session_key=session.session_key)
