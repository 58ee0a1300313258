from django.contrib.auth import views as auth_views
from django.urls import path

from core import metrics, views

urlpatterns = [
    path("events/", views.event_feed, name="event-feed"),
    path("login/", auth_views.LoginView.as_view(template_name="registration/login.html"), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("healthz", views.healthz, name="healthz"),
    path("readyz", views.readyz, name="readyz"),
    path("metrics", metrics.metrics_view, name="metrics"),
]
