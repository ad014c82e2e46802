"""People and groups for admins, and the invited person's set-password screen."""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.urls import reverse_lazy


class SetPasswordView(auth_views.PasswordResetConfirmView):
    template_name = "people/set_password.html"
    success_url = reverse_lazy("login")
    post_reset_login = False
