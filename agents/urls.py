from django.urls import URLPattern

app_name = "agents"
urlpatterns: list[URLPattern] = []
