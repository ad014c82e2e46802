"""The reviewer's decision forms: approve, edit then approve, reject, revert."""

from __future__ import annotations

from typing import Any

from django import forms

from core.errors import InvalidArgument
from reviews.services import COMMENT_MAX, validate_comment
from wiki.forms import TextField, sentence
from wiki.models import CHANGE_SUMMARY_MAX, MARKDOWN_MAX, TITLE_MAX
from wiki.validators import validate_resolved_markdown


def _comment(value: Any, *, required: bool) -> str:
    try:
        return validate_comment(value, required=required)
    except InvalidArgument as error:
        raise forms.ValidationError(sentence(error.message)) from None


class ApproveForm(forms.Form):
    comment = TextField(
        required=False,
        widget=forms.Textarea(
            attrs={
                "rows": 2,
                "maxlength": COMMENT_MAX,
                "placeholder": "Optional note for the author",
            }
        ),
    )
    # The live version the reviewer saw; approval is refused if it moved on meanwhile.
    expected_live_number = forms.IntegerField(min_value=0, widget=forms.HiddenInput)

    def clean_comment(self) -> str:
        return _comment(self.cleaned_data.get("comment"), required=False)


class EditApproveForm(ApproveForm):
    title = TextField(max_length=TITLE_MAX)
    tags = TextField(
        required=False,
        max_length=20 * 52,
        help_text="Comma-separated.",
    )
    body = TextField(
        required=False,
        max_length=MARKDOWN_MAX,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 18, "spellcheck": "false"}),
    )

    def clean_body(self) -> str:
        try:
            return validate_resolved_markdown(self.cleaned_data.get("body") or "")
        except InvalidArgument as error:
            raise forms.ValidationError(sentence(error.message)) from None

    def tag_list(self) -> list[str]:
        raw: str = self.cleaned_data.get("tags") or ""
        return [tag.strip() for tag in raw.split(",") if tag.strip()]


class RejectForm(forms.Form):
    comment = TextField(
        required=False,
        widget=forms.Textarea(
            attrs={
                "rows": 3,
                "maxlength": COMMENT_MAX,
                "placeholder": "What should the author change?",
            }
        ),
    )

    def clean_comment(self) -> str:
        return _comment(self.cleaned_data.get("comment"), required=True)


class RevertForm(forms.Form):
    to_number = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    comment = TextField(required=False, max_length=CHANGE_SUMMARY_MAX)


class CompareForm(forms.Form):
    a = forms.IntegerField(min_value=1)
    b = forms.IntegerField(min_value=1)

    def numbers(self) -> tuple[int, int]:
        data: dict[str, Any] = self.cleaned_data
        return int(data["a"]), int(data["b"])
