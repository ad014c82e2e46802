"""The admin's screens for agents, under /agents/."""

from django.urls import URLPattern, path

from agents import views

app_name = "agents"
urlpatterns: list[URLPattern] = [
    path("", views.agent_list, name="list"),
    path("new/", views.agent_new, name="new"),
    path("<int:agent_id>/", views.agent_detail, name="detail"),
    path("<int:agent_id>/token/", views.agent_token, name="token"),
    path("<int:agent_id>/edit/", views.agent_edit, name="edit"),
    path("<int:agent_id>/rotate/", views.agent_rotate, name="rotate"),
    path("<int:agent_id>/revoke/", views.agent_revoke, name="revoke"),
    path("<int:agent_id>/preview/", views.agent_preview, name="preview"),
    path("<int:agent_id>/pages/add/", views.page_set_add, name="page_set_add"),
    path("<int:agent_id>/pages/every/", views.page_set_all_pages, name="page_set_all_pages"),
    path("<int:agent_id>/pages/<str:page_id>/", views.page_set_update, name="page_set_update"),
    path(
        "<int:agent_id>/pages/<str:page_id>/remove/",
        views.page_set_remove,
        name="page_set_remove",
    ),
    path("<int:agent_id>/pages/<str:page_id>/move/", views.page_set_move, name="page_set_move"),
]
