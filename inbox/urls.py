from django.urls import path

from inbox import views

app_name = "inbox"

urlpatterns = [
    path("", views.inbox, name="inbox"),
    path("<int:item_id>/open/", views.item_open, name="open"),
    path("read-all/", views.read_all, name="read_all"),
    path("channels/", views.channels, name="channels"),
]
