"""Web forms. Field rules come from the service layer's validators, so limits and their
messages are the same in the browser, the REST API and the MCP tools."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

from django import forms
from django.core.validators import ProhibitNullCharactersValidator

from core.errors import InvalidArgument, QuireError
from wiki import validators
from wiki.models import CHANGE_SUMMARY_MAX, TITLE_MAX

# Service error fields → form fields.
_FIELD_NAMES = {
    "title": "title",
    "markdown": "body",
    "body": "body",
    "tags": "tags",
    "instructions": "instructions",
    "change_summary": "change_summary",
    "file": "file",
    "q": "q",
    "query": "q",
}


def sentence(message: str) -> str:
    """Service messages are written to follow a code (`invalid_argument: title must...`)."""
    message = message.strip()
    first_word = message.split(" ", 1)[0]
    # "title must..." becomes "Title must...", but a file name or "v2" keeps its case.
    if first_word.isalpha() and first_word.islower():
        return message[:1].upper() + message[1:]
    return message


def add_service_error(form: forms.Form, error: QuireError) -> None:
    """Show a service error next to the field it is about, or above the form."""
    name = (
        _FIELD_NAMES.get(getattr(error, "field", "") or "", "")
        if isinstance(error, InvalidArgument)
        else ""
    )
    form.add_error(name if name in form.fields else None, sentence(error.message))


def _checked(validate: Callable[[Any], Any], value: Any) -> Any:
    try:
        return validate(value)
    except InvalidArgument as error:
        raise forms.ValidationError(sentence(error.message)) from None


class TextField(forms.CharField):
    """A CharField that leaves NUL to Quire's validators, so a form refuses it with the same
    sentence (naming the character and its position) as the REST API and the MCP tools."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.validators = [
            v for v in self.validators if not isinstance(v, ProhibitNullCharactersValidator)
        ]


def new_form_token() -> str:
    """A form's one-time token: a second save of the same form is refused (see submit_once)."""
    return secrets.token_urlsafe(24)


class OnceForm(forms.Form):
    """A form that saves once: it carries a token that its save claims."""

    form_token = forms.CharField(required=False, max_length=64, widget=forms.HiddenInput)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if not self.is_bound:
            self.fields["form_token"].initial = new_form_token()


class PageForm(OnceForm):
    title = TextField(
        widget=forms.TextInput(attrs={"maxlength": TITLE_MAX, "autofocus": True}),
    )
    body = TextField(
        label="Content (Markdown)",
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 22, "class": "mono", "spellcheck": "true"}),
    )
    tags = TextField(
        required=False,
        help_text="Comma-separated, at most 20, e.g. onboarding, security.",
    )
    instructions = TextField(
        label="How agents should use this page",
        required=False,
        strip=False,
        help_text="Markdown: when and how an agent should use this page. "
        "Reference pages as [[pg_xxxxxxxx]] and files as [[file:NAME]].",
        widget=forms.Textarea(attrs={"rows": 4, "class": "mono"}),
    )
    change_summary = TextField(
        required=False,
        help_text="One sentence: what you changed and why.",
        widget=forms.TextInput(attrs={"maxlength": CHANGE_SUMMARY_MAX}),
    )
    # The live version the form was filled from; see services.version_propose.
    base_number = forms.IntegerField(required=False, widget=forms.HiddenInput)
    # Set after a save met a newer live version and the body holds the merge to resolve.
    resolving = forms.BooleanField(required=False, widget=forms.HiddenInput)
    # Ticked to make a page whose title a sibling already has (shown only then).
    same_title_ok = forms.BooleanField(
        required=False, label="Yes, create a second page with this title here"
    )

    def clean_title(self) -> str:
        return str(_checked(validators.validate_title, self.cleaned_data["title"]))

    def clean_body(self) -> str:
        # After a save met a newer live version, the body holds the merge to resolve.
        validate = (
            validators.validate_resolved_markdown
            if str(self.data.get("resolving", "")).lower() in ("1", "true", "on")
            else validators.validate_markdown
        )
        return str(_checked(validate, self.cleaned_data["body"]))

    def clean_tags(self) -> list[str]:
        return list(_checked(validators.validate_tags, self.cleaned_data["tags"]))

    def clean_instructions(self) -> str:
        return str(
            _checked(
                lambda v: validators.validate_markdown(v, field="instructions"),
                self.cleaned_data["instructions"],
            )
        )

    def clean_change_summary(self) -> str:
        return str(
            _checked(validators.validate_change_summary, self.cleaned_data["change_summary"])
        )


class AppendForm(OnceForm):
    body = TextField(
        label="Markdown to add at the end",
        strip=False,
        widget=forms.Textarea(attrs={"rows": 12, "class": "mono", "autofocus": True}),
        help_text="Added below whatever is live when it is approved, so it never goes stale.",
    )
    change_summary = TextField(
        required=False,
        help_text="One sentence: what you added and why.",
        widget=forms.TextInput(attrs={"maxlength": CHANGE_SUMMARY_MAX}),
    )

    def clean_body(self) -> str:
        value = self.cleaned_data["body"]
        return str(_checked(lambda v: validators.validate_markdown(v, required=True), value))

    def clean_change_summary(self) -> str:
        return str(
            _checked(validators.validate_change_summary, self.cleaned_data["change_summary"])
        )


class MoveForm(forms.Form):
    # The new parent's page id, from the picker; empty for the top level.
    parent = forms.CharField(required=False, max_length=11, widget=forms.HiddenInput)
    # Ticked to move it beside a page of the same title (shown only then).
    same_title_ok = forms.BooleanField(
        required=False, label="Yes, move it there although a page there has its title"
    )


class ReorderForm(forms.Form):
    # "first", or the page id of the sibling to come right after.
    after = forms.CharField(max_length=11)


class AttachmentForm(forms.Form):
    file = forms.FileField(
        label="File",
        help_text="Text, Markdown, CSV, JSON, PDF or Word (.docx); its text is extracted "
        "for agents and search.",
    )


class SearchForm(forms.Form):
    q = TextField(
        label="Search",
        required=False,
        widget=forms.SearchInput(attrs={"placeholder": "Search the wiki", "autofocus": True}),
    )

    def clean_q(self) -> str:
        return str(
            _checked(lambda v: validators.validate_query(v, required=False), self.cleaned_data["q"])
        )


class GrantForm(forms.Form):
    """A group's rights on a page and everything under it (wiki.permissions)."""

    group = forms.ChoiceField(label="Group", choices=())
    rights = forms.MultipleChoiceField(
        label="Rights",
        choices=[
            ("read", "Read: see it anywhere (tree, search, history, mail, agents)"),
            ("propose", "Propose changes, which a reviewer decides"),
            ("publish", "Publish without review (not where a review workflow applies)"),
            ("decide", "Decide proposals (review)"),
        ],
        widget=forms.CheckboxSelectMultiple,
        error_messages={
            "required": "Tick at least one right; to take rights away, remove "
            "the group's grant below."
        },
    )

    def __init__(self, *args: Any, groups: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["group"].choices = [(name, name) for name in groups]  # type: ignore[attr-defined]
