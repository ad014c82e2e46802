"""REST doors to a page's grants: who may read, propose, publish and decide on it (admins)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions, status
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from core.errors import Forbidden, InvalidArgument
from reviews.api import ERRORS, PAGE_ID, WRITE_ERRORS, QuireAPIView, _json_kind
from reviews.serializers import GrantInputSerializer, GrantSerializer, PageAccessSerializer
from wiki import permissions
from wiki.selectors import page_for_person

GRANT_ID = OpenApiParameter(
    "grant_id",
    {"type": "integer", "minimum": 1, "maximum": 2**31 - 1},
    OpenApiParameter.PATH,
    description="A grant's id, as the page's grants list it",
)


def _check_admin_reads_grants(user: User) -> None:
    if not permissions.is_admin(user):
        raise Forbidden(
            "only admins can see and change who may read, propose, publish or decide on a "
            "page; ask an admin."
        )


class PageGrantsView(QuireAPIView):
    parser_classes = [JSONParser]  # a list of objects: JSON only

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        # The grants come as a list, [{"group": ..., "rights": [...]}] (or one such object).
        APIView.initial(self, request, *args, **kwargs)
        if request.method == "POST" and not isinstance(request.data, list | dict):
            raise exceptions.ValidationError(
                'the body must be a JSON list of grants, such as [{"group": "Legal", '
                f'"rights": ["read", "decide"]}}]; it is {_json_kind(request.data)}. '
                "Nothing was changed."
            )

    @extend_schema(
        summary="The grants on a page: which groups may read, propose, publish or decide "
        "here and under it (admins)",
        parameters=[PAGE_ID],
        responses={200: GrantSerializer(many=True), **ERRORS},
    )
    def get(self, request: Request, page_id: str) -> Response:
        _check_admin_reads_grants(self.user())
        page = page_for_person(self.user(), page_id)
        return Response(GrantSerializer(permissions.grants_on(page), many=True).data)

    @extend_schema(
        summary="Give groups rights on a page and everything under it (admins); each "
        "group's rights here replace what it had on this page",
        parameters=[PAGE_ID],
        request=GrantInputSerializer(many=True),
        responses={201: GrantSerializer(many=True), **WRITE_ERRORS},
    )
    def post(self, request: Request, page_id: str) -> Response:
        _check_admin_reads_grants(self.user())
        page = page_for_person(self.user(), page_id)
        body = request.data if isinstance(request.data, list) else [request.data]
        if not body:
            raise InvalidArgument(
                'give at least one grant, such as [{"group": "Legal", "rights": ["read"]}].'
            )
        serializer = GrantInputSerializer(data=body, many=True)
        serializer.is_valid(raise_exception=True)
        permissions.grants_set(
            actor=self.user(),
            page=page,
            grants=[(item["group"], item["rights"]) for item in serializer.validated_data],
        )
        return Response(
            GrantSerializer(permissions.grants_on(page), many=True).data,
            status=status.HTTP_201_CREATED,
        )


class PageGrantView(QuireAPIView):
    @extend_schema(
        summary="Take a grant off a page (admins): its rights fall back to the grant above "
        "it, or to the default",
        parameters=[PAGE_ID, GRANT_ID],
        request=None,
        responses={204: None, **ERRORS},
    )
    def delete(self, request: Request, page_id: str, grant_id: int) -> Response:
        page = page_for_person(self.user(), page_id)
        permissions.grant_delete(actor=self.user(), page=page, grant_id=grant_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class PageAccessView(QuireAPIView):
    @extend_schema(
        summary="Who may read, propose, publish and decide on a page, and from which page's "
        "grant each right comes (admins)",
        parameters=[PAGE_ID],
        responses={200: PageAccessSerializer, **ERRORS},
    )
    def get(self, request: Request, page_id: str) -> Response:
        _check_admin_reads_grants(self.user())
        page = page_for_person(self.user(), page_id)
        rights = [
            {
                "right": held.right,
                "everyone": held.groups is None,
                "groups": held.groups or [],
                "fromPageId": held.source_page_id,
                "fromPath": held.source_path,
                "blockedByWorkflow": held.blocked_by_workflow,
            }
            for held in permissions.holders_at(page)
        ]
        return Response(
            PageAccessSerializer(
                {
                    "pageId": page.public_id,
                    "path": page.path,
                    "rights": rights,
                    "grants": permissions.grants_applying(page),
                }
            ).data
        )
