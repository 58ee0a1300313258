"""Workorders pages: the maintenance Control Room at "/" (mounted before core's shell, so it wins)."""

from django.urls import path

from workorders import views
from workorders.views_equipment import equipment_page
from workorders.views_print import work_order_print
from workorders.views_shift import shift_page
from workorders.views_work_order import work_order_page

urlpatterns = [
    path("", views.control_room, name="control-room"),
    path("control-room/state", views.control_room_state, name="control-room-state"),
    path("workorders/<int:work_order_id>/print", work_order_print, name="work-order-print"),
    path("workorders/<int:work_order_id>/", work_order_page, name="work-order"),
    path("shift/", shift_page, name="shift"),
    path("equipment/<int:cell_id>/", equipment_page, name="equipment"),
]
