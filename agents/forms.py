"""The admin's forms for agents and their page sets; the services do the real validation."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from django import forms
from django.contrib.auth.models import User

from agents.mcp import editing_tools_text
from agents.selectors import page_to_give, possible_owners
from agents.services import NAME_MAX, USE_WHEN_LINE_MAX, USE_WHEN_MAX_LINES
from core.errors import InvalidArgument, QuireError
from wiki.forms import TextField, sentence

if TYPE_CHECKING:
    from agents.models import Agent

T = TypeVar("T")

USE_WHEN_HELP = (
    f"One instruction per line, at most {USE_WHEN_MAX_LINES} lines of {USE_WHEN_LINE_MAX} "
    "characters, e.g. “Use whenever a customer asks about refunds.”"
)
# A use-when textarea can hold no more than this; the service checks the exact limits.
_USE_WHEN_TEXT_MAX = USE_WHEN_MAX_LINES * (USE_WHEN_LINE_MAX + 2) + 1000


class OwnerChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: Any) -> str:
        user: User = obj
        full_name = user.get_full_name()
        return f"{user.get_username()} ({full_name})" if full_name else user.get_username()


class AgentForm(forms.Form):
    name = TextField(
        max_length=NAME_MAX,
        help_text="Unique. Reviewers see it next to everything the agent proposes.",
        widget=forms.TextInput(attrs={"autocomplete": "off"}),
    )
    description = TextField(
        required=False,
        max_length=5000,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="What the agent is for, for the people who curate its pages.",
    )
    owner = OwnerChoiceField(
        queryset=possible_owners(),
        required=False,
        empty_label="No owner",
        help_text="Gets an email when a reviewer decides on one of the agent's proposals.",
    )
    can_edit_pages = forms.BooleanField(
        required=False,
        label="Can propose edits",
        help_text=editing_tools_text() + " Every change it proposes waits for a reviewer.",
    )
    connector_tools = forms.BooleanField(
        required=False,
        label="Offer search and fetch (ChatGPT connectors)",
        help_text="Adds the two tools ChatGPT's deep research and company knowledge call, "
        "over the same pages as search_pages and get_page.",
    )

    def __init__(self, *args: Any, current_owner_id: int | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Fresh per form, so a user created since start-up is offered.
        self.fields["owner"].queryset = possible_owners(current_owner_id)  # type: ignore[attr-defined]

    @classmethod
    def of(cls, agent: Agent) -> AgentForm:
        """The form showing `agent`'s settings, to edit them."""
        shown = {name: getattr(agent, name) for name in cls.base_fields if name != "owner"}
        return cls(current_owner_id=agent.owner_id, initial={**shown, "owner": agent.owner_id})

    def save_with(self, save: Callable[..., T]) -> T | None:
        """What `save` (the service that creates or updates an agent) returns for the
        settings entered, or None when they are invalid or the service refuses them (its
        reason then shown on the form)."""
        if not self.is_valid():
            return None
        try:
            return save(**{name: self.cleaned_data[name] for name in self.base_fields})
        except QuireError as error:
            self.add_service_error(error)
            return None

    def add_service_error(self, error: QuireError) -> None:
        field = getattr(error, "field", "") if isinstance(error, InvalidArgument) else ""
        if "already exists" in error.message:
            field = "name"
        self.add_error(field if field in self.fields else None, sentence(error.message))


class UseWhenMixin(forms.Form):
    use_when = TextField(
        label="Use when",
        required=False,
        max_length=_USE_WHEN_TEXT_MAX,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text=USE_WHEN_HELP,
    )
    always_include = forms.BooleanField(
        required=False,
        label="Always include",
        help_text="The agent is told to read this page at the start of every task.",
    )

    def add_service_error(self, error: QuireError) -> None:
        field = getattr(error, "field", "") if isinstance(error, InvalidArgument) else ""
        self.add_error(field if field in self.fields else None, sentence(error.message))


class PageSetEntryForm(UseWhenMixin):
    """Changes the use-when lines and the always-include flag of one entry."""


class PageSetAddForm(UseWhenMixin):
    """Adds one page with everything under it (chosen in the picker), or every page with a tag."""

    page = forms.CharField(
        required=False,
        max_length=11,
        widget=forms.HiddenInput(attrs={"class": "picker-value"}),
        help_text="The page and every live page under it.",
    )
    tag = forms.CharField(
        required=False,
        max_length=50,
        label="Or every page with the tag",
        help_text="Each live page with this tag becomes its own entry.",
    )
    field_order = ["page", "tag", "use_when", "always_include"]

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        public_id, tag = data.get("page", ""), data.get("tag", "").strip()
        if public_id and tag:
            raise forms.ValidationError("Choose a page or a tag, not both.")
        if not public_id and not tag:
            raise forms.ValidationError(
                "Choose a page: type part of its title or path and pick it from the list. "
                "Or give a tag to add every page with it."
            )
        if public_id:
            page = page_to_give(public_id)
            if page is None:
                raise forms.ValidationError(
                    "That page cannot be given to an agent: it is not live or it is archived. "
                    "Choose another page."
                )
            data["page"] = page
        else:
            data["page"] = None
        data["tag"] = tag
        return data


class MoveForm(forms.Form):
    direction = forms.ChoiceField(choices=[("up", "up"), ("down", "down")])
