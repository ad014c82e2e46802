"""The reviewer's forms: approve, edit then approve, reject, request changes, comment,
revert; and the admin's workflow form."""

from __future__ import annotations

from typing import Any

from django import forms

from core.errors import InvalidArgument
from reviews.actions.rules import CHANGES_REASON_REQUIRED, COMMENT_MAX, validate_comment
from reviews.models import WORKFLOW_NAME_MAX
from reviews.workflows import STEPS_MAX
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


class RequestChangesForm(forms.Form):
    comment = TextField(
        required=False,
        widget=forms.Textarea(
            attrs={"rows": 3, "maxlength": COMMENT_MAX, "placeholder": "What should change?"}
        ),
    )

    def clean_comment(self) -> str:
        comment = _comment(self.cleaned_data.get("comment"), required=False)
        if not comment:
            raise forms.ValidationError(sentence(CHANGES_REASON_REQUIRED))
        return comment


class CommentForm(RequestChangesForm):
    line = forms.IntegerField(required=False, min_value=1, max_value=2**31 - 1)

    def clean_comment(self) -> str:
        comment = _comment(self.cleaned_data.get("comment"), required=False)
        if not comment:
            raise forms.ValidationError("Write the comment first: it is empty.")
        return comment


class WorkflowForm(forms.Form):
    """A workflow's name and up to STEPS_MAX rows of steps; rows without a group are left out."""

    name = TextField(max_length=WORKFLOW_NAME_MAX)

    def __init__(self, *args: Any, rows: int = 3, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rows = rows

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        if not self.steps():
            # In the browser's words: the service's own error shows the REST body's shape.
            raise forms.ValidationError(
                "Give the workflow at least one step: choose a group in the first row of "
                "steps, and how many of its members must approve."
            )
        return cleaned

    def steps(self) -> list[dict[str, Any]]:
        data = self.data
        steps = []
        for i in range(1, STEPS_MAX + 1):
            group = str(data.get(f"step_{i}_group") or "").strip()
            if not group:
                continue
            approvals = str(data.get(f"step_{i}_approvals") or "1").strip()
            due_hours = str(data.get(f"step_{i}_due_hours") or "").strip()
            steps.append(
                {
                    "name": str(data.get(f"step_{i}_name") or "").strip(),
                    "group": group,
                    "approvals": int(approvals) if approvals.isdigit() else 0,
                    # Empty: the default due time; not a whole number: refused by the service.
                    "due_hours": (int(due_hours) if due_hours.isdigit() else 0)
                    if due_hours
                    else None,
                }
            )
        return steps
