from django.urls import path

from orchestrator import views

urlpatterns = [path("plans/", views.plans_page, name="plans")]
