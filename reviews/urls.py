from django.urls import path

from reviews import views, views_batch, views_partial, views_review

app_name = "reviews"
urlpatterns = [
    path("", views.queue, name="queue"),
    path("seen/", views.queue_seen, name="queue_seen"),
    path("decide/", views_batch.queue_decide, name="queue_decide"),
    path("batches/<int:batch_id>/undo/", views_batch.queue_decide_undo, name="batch_undo"),
    path("settings/", views.notification_settings, name="notification_settings"),
    path("pages/<str:page_id>/history/", views.history, name="history"),
    path("pages/<str:page_id>/compare/", views.compare, name="compare"),
    path("pages/<str:page_id>/v<int:number>/", views_review.review, name="review"),
    path("pages/<str:page_id>/v<int:number>/approve/", views_review.review_approve, name="approve"),
    path(
        "pages/<str:page_id>/v<int:number>/edit/",
        views_review.review_edit_approve,
        name="edit_approve",
    ),
    path(
        "pages/<str:page_id>/v<int:number>/request-changes/",
        views_review.review_request_changes,
        name="request_changes",
    ),
    path("pages/<str:page_id>/v<int:number>/reject/", views_review.review_reject, name="reject"),
    path("pages/<str:page_id>/v<int:number>/comment/", views_review.review_comment, name="comment"),
    path("pages/<str:page_id>/v<int:number>/undo/", views_review.review_undo, name="undo"),
    path("pages/<str:page_id>/v<int:number>/seen/", views_review.review_seen, name="seen"),
    path("pages/<str:page_id>/v<int:number>/ask/", views.review_ask, name="ask"),
    path(
        "pages/<str:page_id>/v<int:number>/partial/",
        views_partial.partial_approve,
        name="partial",
    ),
    path("workflows/", views.workflow_list, name="workflows"),
    path("workflows/<int:workflow_id>/", views.workflow_detail, name="workflow"),
    path("workflows/<int:workflow_id>/pages/", views.workflow_pages, name="workflow_pages"),
    path("workflows/<int:workflow_id>/delete/", views.workflow_remove, name="workflow_delete"),
]
