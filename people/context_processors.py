"""How people sign in here: shown on the login page and in the invitation."""

from typing import Any

from django.conf import settings
from django.http import HttpRequest

from people.sso import sso_enabled


def sign_in(request: HttpRequest) -> dict[str, Any]:
    return {
        "sso_enabled": sso_enabled(),
        "sso_provider": settings.QUIRE_OIDC_PROVIDER_NAME,
        "local_passwords": settings.QUIRE_LOCAL_PASSWORDS,
    }
