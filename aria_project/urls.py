from importlib.util import find_spec

from django.contrib import admin
from django.http import HttpResponseRedirect
from django.templatetags.static import static
from django.urls import include, path, re_path
from django.views.generic import RedirectView

from aria_project.api import api, api_not_found
from sentinel.views_performance import alarm_performance_page

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/v1/", api.urls),
    path("api/docs", RedirectView.as_view(url="/api/v1/docs", permanent=False), name="api-docs"),
    re_path(r"^api/(?P<path>.*)$", api_not_found),  # after the API: unknown /api/ paths are JSON 404s
    # Pages link the SVG icon (base.html); this answers browsers that ask anyway (admin, JSON views).
    path("favicon.ico", lambda request: HttpResponseRedirect(static("aria/favicon.svg")), name="favicon"),
    path("alarms/performance/", alarm_performance_page, name="alarm-performance"),
]
# Each app's pages (its urls.py) are mounted at the root; core last so apps may claim "/".
for _app in ("sentinel", "workorders", "assistant", "orchestrator", "core"):
    if find_spec(f"{_app}.urls"):
        urlpatterns.append(path("", include(f"{_app}.urls")))
