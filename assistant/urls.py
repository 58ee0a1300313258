from django.urls import path

from assistant import views

urlpatterns = [path("assistant/", views.ask_page, name="assistant")]
