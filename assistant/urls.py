from django.urls import path

from assistant import views

urlpatterns = [
    path("assistant/", views.ask_page, name="assistant"),
    path("assistant/workbench/", views.workbench_page, name="assistant-workbench"),
]
