"""The Ask ARIA workspace page: the drawer, opened, on a page of its own."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


@login_required
def ask_page(request: HttpRequest) -> HttpResponse:
    return render(request, "assistant/page.html", {"title": "Ask ARIA"})
