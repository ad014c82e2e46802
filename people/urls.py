from django.urls import path

from people import views

app_name = "people"

urlpatterns = [
    path(
        "set-password/<uidb64>/<token>/",
        views.SetPasswordView.as_view(),
        name="set_password",
    ),
]
