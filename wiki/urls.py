"""URLs of the web UI for people."""

from django.urls import path

from wiki import editing, views

app_name = "wiki"
urlpatterns = [
    path("", views.home, name="home"),
    path("search/", views.search, name="search"),
    path("new/", views.page_new, name="new"),
    path("preview/", editing.preview, name="preview"),
    path("pages/pick/", editing.pick, name="pick"),
    path("p/<str:public_id>/", views.page_view, name="page"),
    path("p/<str:public_id>/new-child/", views.page_new, name="new_child"),
    path("p/<str:public_id>/edit/", views.page_edit, name="edit"),
    path("p/<str:public_id>/append/", views.page_append, name="append"),
    path("p/<str:public_id>/archive/", views.page_archive, name="archive"),
    path("p/<str:public_id>/restore/", views.page_restore, name="restore"),
    path("p/<str:public_id>/attachments/", views.attachment_upload, name="attachment_upload"),
    path(
        "p/<str:public_id>/attachments/<int:attachment_id>/",
        views.attachment_download,
        name="attachment",
    ),
    path(
        "p/<str:public_id>/attachments/<int:attachment_id>/remove/",
        views.attachment_remove,
        name="attachment_remove",
    ),
]
