from django.urls import path

from reviews import views

app_name = "reviews"
urlpatterns = [
    path("", views.queue, name="queue"),
    path("settings/", views.notification_settings, name="notification_settings"),
    path("pages/<str:page_id>/history/", views.history, name="history"),
    path("pages/<str:page_id>/compare/", views.compare, name="compare"),
    path("pages/<str:page_id>/v<int:number>/", views.review, name="review"),
]
