"""Who is signed in where, and who signs in through the company's identity provider."""

from django.conf import settings
from django.db import models


class SignInSession(models.Model):
    """One browser session of one person, so that deactivating them can end it at once."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sign_in_sessions"
    )
    session_key = models.CharField(max_length=40, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.user_id}: {self.session_key[:6]}…"


class SsoIdentity(models.Model):
    """A person as the OpenID Connect provider knows them (issuer + subject), and the refresh
    token that lets Quire ask the provider again whether they may still sign in."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso_identity"
    )
    issuer = models.CharField(max_length=500)
    subject = models.CharField(max_length=255)
    # Encrypted with a key derived from SECRET_KEY (people/sso_tokens.py); empty when the
    # provider gave none.
    refresh_token = models.TextField(blank=True, default="")
    signed_in_at = models.DateTimeField()
    checked_at = models.DateTimeField(null=True, blank=True)
    refused_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["issuer", "subject"], name="sso_identity_unique")
        ]
        verbose_name = "single sign-on identity"
        verbose_name_plural = "single sign-on identities"

    def __str__(self) -> str:
        return f"{self.subject} at {self.issuer}"
