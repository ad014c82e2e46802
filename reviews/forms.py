"""The reviewer's decision forms: approve, edit then approve, reject, revert."""

from __future__ import annotations

import re
from typing import Any

from django import forms

from wiki.models import CHANGE_SUMMARY_MAX, MARKDOWN_MAX, TITLE_MAX

COMMENT_MAX = 5000
_CONFLICT_MARKER = re.compile(r"^(<<<<<<<|=======|>>>>>>>)( |$)", re.MULTILINE)


class ApproveForm(forms.Form):
    comment = forms.CharField(
        required=False,
        max_length=COMMENT_MAX,
        widget=forms.Textarea(attrs={"rows": 2, "placeholder": "Optional note for the author"}),
    )
    # The live version the reviewer saw; approval is refused if it moved on meanwhile.
    expected_live_number = forms.IntegerField(min_value=0, widget=forms.HiddenInput)


class EditApproveForm(ApproveForm):
    title = forms.CharField(max_length=TITLE_MAX)
    tags = forms.CharField(
        required=False,
        max_length=20 * 52,
        help_text="Comma-separated.",
    )
    body = forms.CharField(
        required=False,
        max_length=MARKDOWN_MAX,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 18, "spellcheck": "false"}),
    )

    def clean_body(self) -> str:
        body: str = self.cleaned_data.get("body") or ""
        if _CONFLICT_MARKER.search(body):
            raise forms.ValidationError(
                "The text still has conflict markers (<<<<<<<, =======, >>>>>>>). Keep the "
                "lines you want, delete the markers, then approve."
            )
        return body.replace("\r\n", "\n")

    def tag_list(self) -> list[str]:
        raw: str = self.cleaned_data.get("tags") or ""
        return [tag.strip() for tag in raw.split(",") if tag.strip()]


class RejectForm(forms.Form):
    comment = forms.CharField(
        max_length=COMMENT_MAX,
        error_messages={
            "required": "Give a reason: tell the author what to change so the next proposal "
            "can be approved."
        },
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "What should the author change?"}),
    )


class RevertForm(forms.Form):
    to_number = forms.IntegerField(min_value=1, widget=forms.HiddenInput)
    comment = forms.CharField(required=False, max_length=CHANGE_SUMMARY_MAX)


class CompareForm(forms.Form):
    a = forms.IntegerField(min_value=1)
    b = forms.IntegerField(min_value=1)

    def numbers(self) -> tuple[int, int]:
        data: dict[str, Any] = self.cleaned_data
        return int(data["a"]), int(data["b"])
