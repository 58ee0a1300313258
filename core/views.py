from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render


@login_required
def control_room(request: HttpRequest) -> HttpResponse:
    return render(request, "core/control_room.html")


def healthz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})


def readyz(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"status": "ok"})
