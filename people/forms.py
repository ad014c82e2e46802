"""The people and groups screens' forms: they parse; people/services.py decides."""

from __future__ import annotations

from django import forms

from people import selectors


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
