"""The people and groups screens' forms: they parse; people/services.py decides."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from django import forms
from django.contrib.auth.forms import PasswordResetForm
from django.contrib.auth.models import User

from people import selectors

logger = logging.getLogger(__name__)


class InviteForm(forms.Form):
    email = forms.EmailField(label="Email address", max_length=254)
    name = forms.CharField(label="Name", max_length=150, required=False)
    groups = forms.ModelMultipleChoiceField(
        queryset=selectors.groups_by_name(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Groups",
    )


class GroupsForm(forms.Form):
    groups = forms.ModelMultipleChoiceField(
        queryset=selectors.groups_by_name(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Groups",
    )


class GroupForm(forms.Form):
    name = forms.CharField(label="Name", max_length=150)


class MemberForm(forms.Form):
    person = forms.ModelChoiceField(
        queryset=selectors.active_people(),
        label="Person",
        to_field_name="username",
    )


class PasswordResetByEmailForm(PasswordResetForm):
    """Django's own reset form, for invited people too (Django skips anyone without a usable
    password, and an invited person has none until they choose one)."""

    def get_users(self, email: str) -> Iterator[User]:
        yield from selectors.people_by_email(email)

    def send_mail(self, *args: Any, **kwargs: Any) -> None:
        # The page answers the same whether or not a link went out, so a mail server that is
        # down is the log's to tell, not a 500 that would say the address is known.
        try:
            super().send_mail(*args, **kwargs)
        except OSError:
            logger.exception("could not send a password reset email")
