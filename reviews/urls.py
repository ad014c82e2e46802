from django.urls import path

from reviews import views, views_batch, views_partial

app_name = "reviews"
urlpatterns = [
    path("", views.queue, name="queue"),
    path("decide/", views_batch.queue_decide, name="queue_decide"),
    path("batches/<int:batch_id>/undo/", views_batch.queue_decide_undo, name="batch_undo"),
    path("settings/", views.notification_settings, name="notification_settings"),
    path("pages/<str:page_id>/history/", views.history, name="history"),
    path("pages/<str:page_id>/compare/", views.compare, name="compare"),
    path("pages/<str:page_id>/v<int:number>/", views.review, name="review"),
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
