"""REST API routes, included at /api/v1/ (paths exactly as DESIGN.md gives them)."""

from django.urls import path, re_path

from reviews import api, api_batch, api_grants, api_partial

urlpatterns = [
    path("pages/", api.PageListView.as_view(), name="api-pages"),
    path("pages/<str:page_id>/", api.PageDetailView.as_view(), name="api-page"),
    path("pages/<str:page_id>/versions/", api.VersionListView.as_view(), name="api-versions"),
    path(
        "pages/<str:page_id>/versions/<int:number>/",
        api.VersionDetailView.as_view(),
        name="api-version",
    ),
    path(
        "pages/<str:page_id>/versions/<int:number>/approve",
        api.ApproveView.as_view(),
        name="api-approve",
    ),
    path(
        "pages/<str:page_id>/versions/<int:number>/approve-partial",
        api_partial.ApprovePartialView.as_view(),
        name="api-approve-partial",
    ),
    path(
        "pages/<str:page_id>/versions/<int:number>/reject",
        api.RejectView.as_view(),
        name="api-reject",
    ),
    path(
        "pages/<str:page_id>/versions/<int:number>/withdraw",
        api.WithdrawView.as_view(),
        name="api-withdraw",
    ),
    path(
        "pages/<str:page_id>/versions/<int:number>/request-changes",
        api.RequestChangesView.as_view(),
        name="api-request-changes",
    ),
    path(
        "pages/<str:page_id>/versions/<int:number>/ask",
        api.AskView.as_view(),
        name="api-ask",
    ),
    path(
        "pages/<str:page_id>/versions/<int:number>/comments",
        api.CommentView.as_view(),
        name="api-comments",
    ),
    path("pages/<str:page_id>/workflow", api.PageWorkflowView.as_view(), name="api-page-workflow"),
    path(
        "pages/<str:page_id>/grants/", api_grants.PageGrantsView.as_view(), name="api-page-grants"
    ),
    path(
        "pages/<str:page_id>/grants/<int:grant_id>/",
        api_grants.PageGrantView.as_view(),
        name="api-page-grant",
    ),
    path("pages/<str:page_id>/access", api_grants.PageAccessView.as_view(), name="api-page-access"),
    path("reviews/", api.ReviewListView.as_view(), name="api-reviews"),
    path("reviews/decide", api_batch.BatchDecideView.as_view(), name="api-reviews-decide"),
    path(
        "reviews/batches/<int:batch_id>/undo",
        api_batch.BatchUndoView.as_view(),
        name="api-reviews-batch-undo",
    ),
    path("workflows/", api.WorkflowListView.as_view(), name="api-workflows"),
    path("workflows/<int:workflow_id>/", api.WorkflowDetailView.as_view(), name="api-workflow"),
    path(
        "workflows/<int:workflow_id>/pages/",
        api.WorkflowPagesView.as_view(),
        name="api-workflow-pages",
    ),
    path(
        "workflows/<int:workflow_id>/pages/<str:page_id>/",
        api.WorkflowPageView.as_view(),
        name="api-workflow-page",
    ),
    re_path(r"^[\s\S]*$", api.UnknownPathView.as_view(), name="api-unknown"),
]
