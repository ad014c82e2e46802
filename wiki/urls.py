"""URLs of the web UI for reading the wiki; config/urls.py adds the editing forms."""

from django.urls import path

from wiki import editor_aids, views

app_name = "wiki"
urlpatterns = [
    path("", views.home, name="home"),
    path("search/", views.search, name="search"),
    path("preview/", editor_aids.preview, name="preview"),
    path("pages/pick/", editor_aids.pick, name="pick"),
    path("p/<str:public_id>/", views.page_view, name="page"),
    path("p/<str:public_id>/archive/", views.page_archive, name="archive"),
    path("p/<str:public_id>/restore/", views.page_restore, name="restore"),
    path("p/<str:public_id>/move/", views.page_move, name="move"),
    path("p/<str:public_id>/access/", views.page_access, name="access"),
    path("p/<str:public_id>/reorder/", views.page_reorder, name="reorder"),
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
