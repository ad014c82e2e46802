"""The people and groups screens' forms: they parse; people/services.py decides."""

from __future__ import annotations

from django import forms
from django.contrib.auth.models import Group, User


class InviteForm(forms.Form):
    email = forms.EmailField(label="Email address", max_length=254)
    name = forms.CharField(label="Name", max_length=150, required=False)
    groups = forms.ModelMultipleChoiceField(
        queryset=Group.objects.order_by("name"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Groups",
    )


class GroupsForm(forms.Form):
    groups = forms.ModelMultipleChoiceField(
        queryset=Group.objects.order_by("name"),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Groups",
    )


class GroupForm(forms.Form):
    name = forms.CharField(label="Name", max_length=150)


class MemberForm(forms.Form):
    person = forms.ModelChoiceField(
        queryset=User.objects.filter(is_active=True).order_by("username"),
        label="Person",
        to_field_name="username",
    )
