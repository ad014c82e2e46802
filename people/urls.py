from django.urls import path

from people import views

app_name = "people"

urlpatterns = [
    path("people/", views.people_list, name="list"),
    path("people/invite/", views.person_invite, name="invite"),
    path("people/<int:person_id>/", views.person_detail, name="person"),
    path("people/<int:person_id>/deactivate/", views.person_deactivate, name="deactivate"),
    path("people/<int:person_id>/reactivate/", views.person_reactivate, name="reactivate"),
    path("groups/", views.groups_list, name="groups"),
    path("groups/<int:group_id>/", views.group_detail, name="group"),
    path("groups/<int:group_id>/webhook/", views.group_webhook, name="group_webhook"),
    path(
        "groups/<int:group_id>/members/<int:person_id>/remove/",
        views.group_member_remove,
        name="member_remove",
    ),
    path("password-reset/", views.PasswordResetView.as_view(), name="password_reset"),
    path("password-reset/sent/", views.PasswordResetSentView.as_view(), name="password_reset_sent"),
    path(
        "password-reset/<uidb64>/<token>/",
        views.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path(
        "set-password/<uidb64>/<token>/",
        views.SetPasswordView.as_view(),
        name="set_password",
    ),
]
