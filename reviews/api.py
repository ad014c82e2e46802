"""REST API (/api/v1/): read pages and history, list and decide reviews.

Views parse input, call one selector or service, and serialise. Every failure is JSON
`{"error": {"code", "message"}}` with the matching HTTP status.
"""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth.models import User
from django.http import Http404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.generics import ListAPIView
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import NotFound, QuireError, TryAgain
from reviews import asking, selectors, workflows
from reviews.actions.comments import review_comment_add
from reviews.actions.decide import version_approve, version_reject, version_request_changes
from reviews.actions.withdraw import version_withdraw
from reviews.api_tokens import HashedTokenAuthentication
from reviews.serializers import (
    ApproveInputSerializer,
    AskInputSerializer,
    AssignInputSerializer,
    CommentInputSerializer,
    ErrorSerializer,
    PageDetailSerializer,
    PageSerializer,
    PageWorkflowSerializer,
    RejectInputSerializer,
    RequestChangesInputSerializer,
    ReviewSerializer,
    VersionDetailSerializer,
    VersionSerializer,
    WorkflowInputSerializer,
    WorkflowSerializer,
)
from wiki.models import Version
from wiki.scope import person_scope
from wiki.selectors import page_for_person
from wiki.validators import QUERY_MAX, check_text, validate_query

_CODES = {
    400: "invalid_argument",
    401: "not_authenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    409: "conflict",
    415: "unsupported_media_type",
    429: "rate_limited",
}

ERRORS = {
    400: OpenApiResponse(
        ErrorSerializer,
        description="Invalid input (a parameter out of its declared range, a NUL character, "
        "JSON nested too deep); nothing changed.",
    ),
    401: OpenApiResponse(ErrorSerializer, description="Not logged in and no valid token."),
    403: OpenApiResponse(ErrorSerializer, description="Not allowed."),
    404: OpenApiResponse(ErrorSerializer, description="No such page or version."),
    405: OpenApiResponse(ErrorSerializer, description="This method is not allowed here."),
    406: OpenApiResponse(
        ErrorSerializer, description="The Accept header asks for other than JSON."
    ),
    503: OpenApiResponse(
        ErrorSerializer,
        description="The database is unavailable for a moment; retry after `Retry-After` seconds.",
    ),
}
WRITE_ERRORS = {
    **ERRORS,
    415: OpenApiResponse(ErrorSerializer, description="Send the body as JSON or a form."),
}
CONFLICT = {
    **WRITE_ERRORS,
    409: OpenApiResponse(
        ErrorSerializer,
        description="The version is not in review, or it is stale and its changes conflict "
        "with the live version (`detail.conflicts`); nothing changed.",
    ),
}
PAGE_ID_PATTERN = r"^pg_[a-z2-7]{8}$"
# A filter parameter: a page id, or empty for no filter.
PAGE_FILTER_PATTERN = r"^(pg_[a-z2-7]{8})?$"
AUTHOR_KIND_PATTERN = r"^(agent|human)?$"
STEP_FILTER_PATTERN = r"^([1-9][0-9]?)?$"
NO_NUL = r"^[^\x00]*$"
PAGE_ID = OpenApiParameter(
    "page_id",
    {"type": "string", "pattern": PAGE_ID_PATTERN},
    OpenApiParameter.PATH,
    description="Public page id, pg_…",
)
NUMBER = OpenApiParameter(
    "number",
    {"type": "integer", "minimum": 1, "maximum": 2**31 - 1},
    OpenApiParameter.PATH,
    description="Version number",
)


def only_rest_api(endpoints: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """drf-spectacular preprocessing hook: keep the /api/v1/ endpoints only."""
    return [endpoint for endpoint in endpoints if endpoint[0].startswith("/api/v1/")]


# gunicorn answers this itself, before Quire sees the request, so every path may get it.
REQUEST_LINE_TOO_LONG = {
    "description": "The request line (method, path and query string) is longer than the "
    "server takes (gunicorn's limit, 4094 bytes); shorten the query. The body is the "
    "server's own plain text, not JSON."
}


def declare_request_line_limit(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: every operation may answer 414, and a list of
    grants holds at least one (drf-spectacular has no way to say so on the serializer)."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            operation.setdefault("responses", {}).setdefault("414", REQUEST_LINE_TOO_LONG)
    grants = result.get("paths", {}).get("/api/v1/pages/{page_id}/grants/", {}).get("post")
    if grants:
        for content in grants.get("requestBody", {}).get("content", {}).values():
            if content.get("schema", {}).get("type") == "array":
                content["schema"]["minItems"] = 1
    return result


def error_response(
    code: str, message: str, http_status: int, detail: dict[str, Any] | None = None
) -> Response:
    body: dict[str, Any] = {"code": code, "message": message}
    if detail:
        body["detail"] = detail
    return Response({"error": body}, status=http_status)


def _drf_message(data: Any) -> str:
    """One readable sentence out of DRF's error structure."""
    if isinstance(data, dict):
        if "detail" in data and len(data) == 1:
            return _drf_message(data["detail"])
        parts = [
            f"{field}: {_drf_message(value)}"
            if field != "non_field_errors"
            else _drf_message(value)
            for field, value in data.items()
        ]
        return " ".join(parts)
    if isinstance(data, list):
        return " ".join(_drf_message(item) for item in data)
    return str(data)


def _public_parent_ids(detail: dict[str, Any]) -> dict[str, Any]:
    """Conflict details name parents by primary key; the API speaks public page ids."""
    conflicts = detail.get("conflicts")
    if not conflicts:
        return detail
    pks = {
        value
        for conflict in conflicts
        if conflict.get("field") == "parent"
        for value in (conflict["base"], conflict["live"], conflict["proposal"])
        if value is not None
    }
    public = selectors.public_ids(pks)
    for conflict in conflicts:
        if conflict.get("field") == "parent":
            for side in ("base", "live", "proposal"):
                conflict[side] = public.get(conflict[side])
    return detail


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array"


class QuireAPIView(APIView):
    # Token first, so a request without credentials gets 401 with WWW-Authenticate.
    authentication_classes = [HashedTokenAuthentication, SessionAuthentication]

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        if request.method == "POST":
            # A malformed body is refused even where the endpoint reads none of it, and so is
            # JSON that is not an object: `[]` or `null` must not pass for "no comment".
            if not isinstance(request.data, dict):
                raise exceptions.ValidationError(
                    'the body must be a JSON object, such as {"comment": "..."}, or empty; '
                    f"it is {_json_kind(request.data)}. Nothing was changed."
                )

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, QuireError):
            answer = error_response(
                exc.code, exc.message, exc.http_status, _public_parent_ids(dict(exc.detail))
            )
            if isinstance(exc, TryAgain):
                answer["Retry-After"] = str(exc.retry_after)
            return answer
        response = super().handle_exception(exc)
        http_status = response.status_code
        if isinstance(exc, Http404):
            message = str(exc) or "Not found."
        else:
            message = _drf_message(response.data)
        body = error_response(_CODES.get(http_status, "error"), message, http_status)
        for header, value in response.headers.items():
            if header.lower() in ("www-authenticate", "allow", "retry-after"):
                body[header] = value
        return body

    def user(self) -> User:
        user = self.request.user
        assert isinstance(user, User)
        return user


class QuireListView(QuireAPIView, ListAPIView):
    pass


def _check_filter(request: Request, name: str, pattern: str, hint: str) -> None:
    """A filter parameter must have the shape the schema declares (empty: no filter)."""
    value = request.query_params.get(name) or ""
    if not re.fullmatch(pattern, value):
        raise exceptions.ValidationError({name: hint})


def _version(user: User, page_id: str, number: int) -> Version:
    return selectors.version_of(page_for_person(user, page_id), number, reader=user)


def _step(data: dict[str, Any], version: Version) -> int | None:
    """The step a decision is given for: the one the body names, else the one the proposal
    was at when the request read it (so a decision racing others cannot land on the next
    step)."""
    if data.get("step") is not None:
        return int(data["step"])
    review = selectors.review_of(version)
    return review.step + 1 if review is not None else None


class PageListView(QuireListView):
    serializer_class = PageSerializer

    @extend_schema(
        summary="List live pages",
        parameters=[
            OpenApiParameter(
                "q",
                {"type": "string", "maxLength": QUERY_MAX, "pattern": NO_NUL},
                description="Full-text search query",
            ),
            OpenApiParameter(
                "tag",
                {"type": "string", "pattern": NO_NUL},
                description="Only pages with this tag",
            ),
            OpenApiParameter(
                "parent",
                {"type": "string", "pattern": PAGE_FILTER_PATTERN},
                description="Only children of this page id",
            ),
        ],
        responses={200: PageSerializer(many=True), **ERRORS},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> Any:
        _check_filter(
            self.request, "parent", PAGE_FILTER_PATTERN, "Give a page id like pg_abcdefgh."
        )
        params = self.request.query_params
        query = validate_query(params.get("q"), required=False)
        tag, parent = (
            check_text(params.get(name) or "", field=name).strip() for name in ("tag", "parent")
        )
        reader = person_scope(self.user())
        if query:
            return selectors.search_live_pages(query, reader=reader, tag=tag, parent=parent)
        return selectors.live_pages(reader=reader, tag=tag, parent=parent)


class PageDetailView(QuireAPIView):
    @extend_schema(
        summary="The live version of a page",
        parameters=[PAGE_ID],
        responses={200: PageDetailSerializer, **ERRORS},
    )
    def get(self, request: Request, page_id: str) -> Response:
        return Response(
            PageDetailSerializer(page_for_person(request.user, page_id, live_only=True)).data
        )


class VersionListView(QuireListView):
    serializer_class = VersionSerializer

    @extend_schema(
        summary="Every version of a page, newest first",
        parameters=[PAGE_ID],
        responses={200: VersionSerializer(many=True), **ERRORS},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> Any:
        user = self.user()
        return selectors.page_versions(page_for_person(user, self.kwargs["page_id"]), reader=user)


class VersionDetailView(QuireAPIView):
    @extend_schema(
        summary="One version, with unified diffs against its base and against live",
        parameters=[PAGE_ID, NUMBER],
        responses={200: VersionDetailSerializer, **ERRORS},
    )
    def get(self, request: Request, page_id: str, number: int) -> Response:
        user = self.user()
        version = _version(user, page_id, number)
        # A read writes nothing: what it showed travels as `shown`, for a batch decision.
        return Response(VersionDetailSerializer(version, context={"viewer": user}).data)


class ReviewListView(QuireListView):
    serializer_class = ReviewSerializer

    @extend_schema(
        summary="Versions in review, oldest first",
        parameters=[
            OpenApiParameter(
                "agent",
                {"type": "string", "pattern": NO_NUL},
                description="Only this agent's proposals",
            ),
            OpenApiParameter(
                "page",
                {"type": "string", "pattern": PAGE_FILTER_PATTERN},
                description="Only proposals on this page id",
            ),
            OpenApiParameter(
                "author_kind",
                {"type": "string", "enum": ["", "agent", "human"]},
                description="Agent or person (empty: both)",
            ),
            OpenApiParameter(
                "workflow",
                {"type": "string", "pattern": NO_NUL},
                description="Only proposals that started with this workflow: its id (as "
                "/api/v1/workflows/ lists it) or its name",
            ),
            OpenApiParameter(
                "step",
                {"type": "integer", "minimum": 1, "maximum": 99},
                description="Only proposals waiting on this step (from 1)",
            ),
        ],
        responses={200: ReviewSerializer(many=True), **ERRORS},
    )
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        return super().get(request, *args, **kwargs)

    def get_queryset(self) -> Any:
        selectors.check_can_see_queue(self.user())
        _check_filter(self.request, "page", PAGE_FILTER_PATTERN, "Give a page id like pg_abcdefgh.")
        _check_filter(
            self.request,
            "author_kind",
            AUTHOR_KIND_PATTERN,
            "Give agent or human, or leave it out.",
        )
        _check_filter(self.request, "step", STEP_FILTER_PATTERN, "Give a step number from 1 to 99.")
        return selectors.review_queue(
            selectors.QueueFilters.from_params(self.request.query_params), for_user=self.user()
        )


def _input(serializer_class: type[Any], request: Request) -> dict[str, Any]:
    serializer = serializer_class(data=request.data)  # an object: QuireAPIView.initial
    serializer.is_valid(raise_exception=True)
    validated: dict[str, Any] = serializer.validated_data
    return validated


class ApproveView(QuireAPIView):
    @extend_schema(
        summary="Approve a version in review (a clean stale proposal is merged three-way)",
        parameters=[PAGE_ID, NUMBER],
        request=ApproveInputSerializer,
        responses={200: VersionDetailSerializer, **ERRORS, **CONFLICT},
    )
    def post(self, request: Request, page_id: str, number: int) -> Response:
        data = _input(ApproveInputSerializer, request)
        version = _version(self.user(), page_id, number)
        version = version_approve(
            actor=self.user(),
            version=version,
            step=_step(data, version),
            comment=data.get("comment", ""),
            expected_live_number=data.get("expectedLiveVersion"),
        )
        return Response(
            VersionDetailSerializer(_version(self.user(), page_id, version.number)).data
        )


class RejectView(QuireAPIView):
    @extend_schema(
        summary="Reject a version in review, with the reason the author will see",
        parameters=[PAGE_ID, NUMBER],
        request=RejectInputSerializer,
        responses={200: VersionDetailSerializer, **ERRORS, **CONFLICT},
    )
    def post(self, request: Request, page_id: str, number: int) -> Response:
        data = _input(RejectInputSerializer, request)
        version = _version(self.user(), page_id, number)
        version = version_reject(
            actor=self.user(),
            version=version,
            step=_step(data, version),
            comment=data.get("comment", ""),
        )
        return Response(
            VersionDetailSerializer(_version(self.user(), page_id, version.number)).data
        )


class RequestChangesView(QuireAPIView):
    @extend_schema(
        summary="Send a version in review back to its author with what to change",
        description="It stays in review, waiting on its author; the author's revision "
        "continues the same review from step 1, with the comments kept.",
        parameters=[PAGE_ID, NUMBER],
        request=RequestChangesInputSerializer,
        responses={200: VersionDetailSerializer, **ERRORS, **CONFLICT},
    )
    def post(self, request: Request, page_id: str, number: int) -> Response:
        data = _input(RequestChangesInputSerializer, request)
        version = _version(self.user(), page_id, number)
        version = version_request_changes(
            actor=self.user(),
            version=version,
            step=_step(data, version),
            comment=data["comment"],
        )
        return Response(
            VersionDetailSerializer(_version(self.user(), page_id, version.number)).data
        )


class CommentView(QuireAPIView):
    @extend_schema(
        summary="Comment on a version in review, or on one line of its proposed text",
        parameters=[PAGE_ID, NUMBER],
        request=CommentInputSerializer,
        responses={201: VersionDetailSerializer, **ERRORS, **CONFLICT},
    )
    def post(self, request: Request, page_id: str, number: int) -> Response:
        data = _input(CommentInputSerializer, request)
        review_comment_add(
            actor=self.user(),
            version=_version(self.user(), page_id, number),
            comment=data["comment"],
            line=data.get("line"),
        )
        return Response(
            VersionDetailSerializer(_version(self.user(), page_id, number)).data,
            status=status.HTTP_201_CREATED,
        )


class AskView(QuireAPIView):
    parser_classes = [JSONParser]  # people are a list: JSON only

    @extend_schema(
        summary="Ask people by name to review a version in review",
        description="Its author (or the owner of the agent that wrote it), someone who "
        "decides its current step, or an admin asks people who may decide that step; each "
        "gets an inbox item and an email, and the review lists them under `asked`.",
        parameters=[PAGE_ID, NUMBER],
        request=AskInputSerializer,
        responses={
            201: VersionDetailSerializer,
            **WRITE_ERRORS,
            403: OpenApiResponse(
                ErrorSerializer,
                description="Only its author, a decider of its current step or an admin asks.",
            ),
            404: OpenApiResponse(
                ErrorSerializer, description="No such page or version, or nobody by a name."
            ),
            409: OpenApiResponse(
                ErrorSerializer,
                description="It is not in review, a person named cannot decide its current "
                "step (or is you), or was asked already; nobody was asked.",
            ),
        },
    )
    def post(self, request: Request, page_id: str, number: int) -> Response:
        data = _input(AskInputSerializer, request)
        asking.review_ask_people(
            actor=self.user(),
            version=_version(self.user(), page_id, number),
            usernames=data["people"],
        )
        return Response(
            VersionDetailSerializer(_version(self.user(), page_id, number)).data,
            status=status.HTTP_201_CREATED,
        )


class WithdrawView(QuireAPIView):
    @extend_schema(
        summary="Withdraw your own version in review",
        parameters=[PAGE_ID, NUMBER],
        request=None,
        responses={200: VersionDetailSerializer, **ERRORS, **CONFLICT},
    )
    def post(self, request: Request, page_id: str, number: int) -> Response:
        version = version_withdraw(
            actor=self.user(), version=_version(self.user(), page_id, number)
        )
        return Response(
            VersionDetailSerializer(_version(self.user(), page_id, version.number)).data,
            status=status.HTTP_200_OK,
        )


WORKFLOW_ID = OpenApiParameter(
    "workflow_id",
    {"type": "integer", "minimum": 1, "maximum": 2**31 - 1},
    OpenApiParameter.PATH,
    description="Workflow id",
)


class WorkflowListView(QuireAPIView):
    parser_classes = [JSONParser]  # steps are a list of objects: JSON only

    @extend_schema(
        summary="Review workflows, with their steps and the pages they are assigned to "
        "(reviewers and admins)",
        responses={200: WorkflowSerializer(many=True), **ERRORS},
    )
    def get(self, request: Request) -> Response:
        # Reviewers and admins: the pages listed may not be live yet.
        selectors.check_can_see_queue(self.user())
        return Response(WorkflowSerializer(workflows.workflows(), many=True).data)

    @extend_schema(
        summary="Define a review workflow (admins)",
        request=WorkflowInputSerializer,
        responses={201: WorkflowSerializer, **WRITE_ERRORS, **CONFLICT},
    )
    def post(self, request: Request) -> Response:
        data = _input(WorkflowInputSerializer, request)
        workflow = workflows.workflow_create(
            actor=self.user(),
            name=data["name"],
            steps=[dict(step) for step in data["steps"]],
            never_in_batch=data.get("neverInBatch", []),
        )
        return Response(WorkflowSerializer(workflow).data, status=status.HTTP_201_CREATED)


class WorkflowDetailView(QuireAPIView):
    parser_classes = [JSONParser]

    @extend_schema(
        summary="One review workflow",
        parameters=[WORKFLOW_ID],
        responses={200: WorkflowSerializer, **ERRORS},
    )
    def get(self, request: Request, workflow_id: int) -> Response:
        selectors.check_can_see_queue(self.user())
        return Response(WorkflowSerializer(workflows.workflow_by_id(workflow_id)).data)

    @extend_schema(
        summary="Rename a workflow and replace its steps (admins); proposals in review keep "
        "the steps they started with",
        parameters=[WORKFLOW_ID],
        request=WorkflowInputSerializer,
        responses={200: WorkflowSerializer, **WRITE_ERRORS, **CONFLICT},
    )
    def put(self, request: Request, workflow_id: int) -> Response:
        data = _input(WorkflowInputSerializer, request)
        workflow = workflows.workflow_update(
            actor=self.user(),
            workflow=workflows.workflow_by_id(workflow_id),
            name=data["name"],
            steps=[dict(step) for step in data["steps"]],
            never_in_batch=data.get("neverInBatch"),
        )
        return Response(WorkflowSerializer(workflow).data)

    @extend_schema(
        summary="Delete a workflow and its assignments (admins); proposals in review keep "
        "their steps",
        parameters=[WORKFLOW_ID],
        request=None,
        responses={204: None, **ERRORS},
    )
    def delete(self, request: Request, workflow_id: int) -> Response:
        workflows.workflow_delete(actor=self.user(), workflow=workflows.workflow_by_id(workflow_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class WorkflowPagesView(QuireAPIView):
    @extend_schema(
        summary="Assign a workflow to a page and everything under it (admins)",
        parameters=[WORKFLOW_ID],
        request=AssignInputSerializer,
        responses={201: WorkflowSerializer, **WRITE_ERRORS},
    )
    def post(self, request: Request, workflow_id: int) -> Response:
        data = _input(AssignInputSerializer, request)
        workflow = workflows.workflow_by_id(workflow_id)
        workflows.workflow_assign(
            actor=self.user(),
            workflow=workflow,
            page=page_for_person(self.user(), data["pageId"]),
            replace=data["replace"],
        )
        return Response(
            WorkflowSerializer(workflows.workflow_by_id(workflow_id)).data,
            status=status.HTTP_201_CREATED,
        )


class WorkflowPageView(QuireAPIView):
    @extend_schema(
        summary="Take a workflow off a page (admins); the page falls back to the one above",
        parameters=[WORKFLOW_ID, PAGE_ID],
        request=None,
        responses={204: None, **ERRORS},
    )
    def delete(self, request: Request, workflow_id: int, page_id: str) -> Response:
        workflows.workflow_unassign(
            actor=self.user(),
            workflow=workflows.workflow_by_id(workflow_id),
            page=page_for_person(self.user(), page_id),
        )
        return Response(status=status.HTTP_204_NO_CONTENT)


class PageWorkflowView(QuireAPIView):
    @extend_schema(
        summary="The review workflow that applies to a page, and the page it comes from",
        parameters=[PAGE_ID],
        responses={200: PageWorkflowSerializer, **ERRORS},
    )
    def get(self, request: Request, page_id: str) -> Response:
        applied = workflows.workflow_seen_by(self.user(), page_for_person(self.user(), page_id))
        source = applied.source
        return Response(
            PageWorkflowSerializer(
                {
                    "workflow": applied.name,
                    "workflowId": applied.workflow.pk if applied.workflow else None,
                    "steps": applied.steps,
                    "source": {
                        "pageId": source.public_id,
                        "title": source.title,
                        "path": source.path,
                    }
                    if source is not None
                    else None,
                    "default": applied.workflow is None,
                }
            ).data
        )


@extend_schema(exclude=True)
class UnknownPathView(QuireAPIView):
    """Any other path under /api/v1/: a JSON 404 instead of the HTML page."""

    def _unknown(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        raise NotFound(
            f"there is no API endpoint at {request.path}; see /api/docs/ for the endpoints."
        )

    get = post = put = patch = delete = _unknown
