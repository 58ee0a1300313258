"""Every ui_render component drawn where people work: the Control Room activity feed (bus events,
validated by the server's contract) and the Ask ARIA drawer (chat frames), both through the one
renderer module (static/assistant/render.js); and the printable work order with its print stylesheet."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from tests.browser.tabs import open_tab, sign_in

COMPONENTS = [
    "alert_banner", "signal_chart", "bar_chart", "equipment_kb_card", "kb_progress", "pattern_match",
    "diagnosis_card", "work_order_card",
]  # fmt: skip
HOSTILE = "<img src=x id=injected-render>"


def props_by_component(cell_id: int, work_order_id: int) -> dict[str, dict]:
    """One valid props set per component (core/events/render_props.py), with markup in the text."""
    points = [
        {"t": f"2026-11-30T0{i}:00:00+00:00", "avg": v, "max": v, "min": v} for i, v in enumerate([2.0, 3.5, 5.0])
    ]
    return {
        "alert_banner": {"cell_id": cell_id, "severity": "trip", "message": f"P-02 vibration TRIP {HOSTILE}"},
        "signal_chart": {
            "cell_id": cell_id, "signal_def_ids": [1], "minutes": 60, "title": "P-02: vibration_mm_s",
            "series": [{"signal_def_id": 1, "key": "vibration_mm_s", "unit": "mm/s",
                        "thresholds": {"alert": 4.5, "trip": 7.1}, "points": points}],
        },
        "bar_chart": {"cell_id": cell_id, "title": "Failures per mode", "labels": ["bearing", "seal"], "values": [3, 1]},
        "equipment_kb_card": {"cell_id": cell_id, "cell_tag": "P-02", "name": "Pump",
                              "kb": {"equipment": {"type": "pump"}, "failure_modes": {"bearing_wear": {}}}},
        "kb_progress": {"cell_id": cell_id, "cell_tag": "P-02", "stage": "reading_kb", "message": "KB read", "done": 2, "total": 3},
        "pattern_match": {
            "cell_id": cell_id, "similarity": 0.91,
            "current_pattern": {"vibration_mm_s": {"peak": 5.0, "duration_min": 12}},
            "past_failure": {"id": 3, "failure_mode": "bearing_wear", "failure_time": "2026-03-02T10:00:00+00:00",
                             "root_cause": f"Drive-end bearing worn {HOSTILE}",
                             "signal_patterns": {"vibration_mm_s": {"peak": 5.2, "duration_min": 15}}},
        },
        "diagnosis_card": {"cell_id": cell_id, "cell_tag": "P-02", "title": "Bearing wear likely",
                           "findings": ["vibration up 150 %", HOSTILE], "severity": "critical", "confidence": 0.86},
        "work_order_card": {
            "cell_id": cell_id, "printable": True, "print_url": f"/workorders/{work_order_id}/print",
            "work_order": {"id": work_order_id, "cell_id": cell_id, "cell_tag": "P-02", "title": "Replace bearings",
                           "status": "open", "priority": "high", "recommended_actions": ["Isolate the pump"],
                           "required_parts": [{"ref": "SKF-6310-2Z-C3", "qty": 1}]},
        },
    }  # fmt: skip


def make_printable_order(server) -> tuple[int, int]:
    out = server.manage(
        "shell",
        "-c",
        "from django.utils import timezone\n"
        "from tests.workorders import factories as f\n"
        "from sentinel.models import Cell\n"
        "cell = Cell.objects.filter(tag='PR-01').first() or f.make_cell('PR-01')\n"
        "f.make_kb(cell)\n"
        "now = timezone.now()\n"
        "wo = f.make_work_order(cell, title='Replace pump bearings', status='open', priority='high',"
        " rca_summary='bearing_wear: matches the failure of 2026-03-02.', confidence=0.86,"
        " recommended_actions=['Isolate, lock out and drain the pump (LOTO)', 'Pull the bearings'],"
        " required_parts=[{'ref': 'SKF-6310-2Z-C3', 'qty': 1}], required_skills=['mechanical'],"
        " suggested_window_start=now, suggested_window_end=now + timezone.timedelta(hours=3))\n"
        "print('IDS', cell.pk, wo.pk)\n",
    )
    line = next(x for x in out.splitlines() if x.startswith("IDS"))
    _, cell_id, wo_id = line.split()
    return int(cell_id), int(wo_id)


@pytest.mark.browser
def test_every_component_is_drawn_in_the_control_room_feed(browser, aria_server):
    aria_server.create_user("rhea", "render-pass-1", "operator")
    cell_id, wo_id = make_printable_order(aria_server)
    page = open_tab(browser, aria_server)
    sign_in(page, "rhea", "render-pass-1", next_path="/")
    expect(page.locator("#ws-status")).to_have_attribute("data-status", "open")

    for component, props in props_by_component(cell_id, wo_id).items():
        aria_server.publish(
            "ui_render", {"agent": "investigator", "component": component, "props": props, "turn_id": "t-render"}
        )
    feed = page.locator("#activity-feed")
    for component in COMPONENTS:
        row = feed.locator(f"li.act-render[data-component={component}]")
        expect(row).to_have_count(1)
        expect(row.locator(f".aria-render[data-component={component}]")).to_be_visible()
    # drawn, not listed: charts are SVG, the pattern match compares peaks, the card links the print page
    expect(feed.locator(".aria-render[data-component=signal_chart] svg polyline")).to_have_count(1)
    expect(feed.locator(".aria-render[data-component=bar_chart] svg rect.aria-bar")).to_have_count(2)
    expect(feed.locator(".aria-render[data-component=pattern_match] table")).to_contain_text("5.2")
    expect(feed.locator(".aria-render[data-component=kb_progress] [role=progressbar]")).to_have_attribute(
        "aria-valuenow", "2"
    )
    link = feed.locator(".aria-render[data-component=work_order_card] a.aria-print-link")
    expect(link).to_have_attribute("href", f"/workorders/{wo_id}/print")
    assert page.locator("#injected-render").count() == 0  # text only, never markup
    expect(feed.locator(".aria-render[data-component=diagnosis_card]")).to_contain_text(HOSTILE)
    # the Control Room's own work-order card links the printable order too
    expect(page.locator(f"#work-order-list a.wo-print-link[href='/workorders/{wo_id}/print']")).to_have_count(1)
    assert not [e for e in page.console_errors if "Content Security Policy" in e], page.console_errors

    # The printable order opens from the card with its print stylesheet
    with page.context.expect_page() as opened:
        link.click()
    sheet = opened.value
    sheet.wait_for_load_state()
    expect(sheet.locator("#work-order-print h1")).to_contain_text(f"WO-{wo_id} · Replace pump bearings")
    expect(sheet.locator("#print-actions")).to_contain_text("Isolate, lock out and drain the pump (LOTO)")
    expect(sheet.locator("#print-parts")).to_contain_text("SKF-6310-2Z-C3")
    expect(sheet.locator("#print-permits")).to_contain_text("Isolation / lock-out tag-out (LOTO)")
    expect(sheet.locator("#print-rca")).to_contain_text("bearing_wear")
    expect(sheet.locator(".print-toolbar")).to_be_visible()
    sheet.emulate_media(media="print")
    expect(sheet.locator(".print-toolbar")).to_be_hidden()  # the print stylesheet drops the chrome
    assert sheet.evaluate("getComputedStyle(document.querySelector('.sheet')).boxShadow") == "none"
    sheet.pdf()  # Chromium lays it out for paper without error


@pytest.mark.browser
def test_every_component_is_drawn_in_the_drawer(browser, aria_server):
    aria_server.create_user("dora", "render-pass-2", "operator")
    page = open_tab(browser, aria_server)
    frames = [
        {"type": "ui_render", "component": c, "props": p} for c, p in props_by_component(4, 77).items()
    ]  # fmt: skip

    def proxy(ws) -> None:
        server = ws.connect_to_server()

        def to_page(message) -> None:
            frame = json.loads(message)
            if frame.get("type") == "done":  # the server's reply, then what a render-heavy turn draws
                for extra in frames:
                    ws.send(json.dumps(extra))
            ws.send(message)

        server.on_message(to_page)
        ws.on_message(lambda message: server.send(message))

    page.route_web_socket("**/ws/agent/chat*", proxy)
    sign_in(page, "dora", "render-pass-2")
    expect(page.locator("#aria-drawer")).to_be_visible()
    page.fill("#aria-text", "Show me P-02")
    page.click("#aria-send")
    log = page.locator("#aria-log")
    for component in COMPONENTS:
        expect(log.locator(f".aria-render[data-component={component}]")).to_have_count(1)
    expect(log.locator(".aria-render[data-component=pattern_match] svg rect")).not_to_have_count(0)
    expect(log.locator(".aria-render[data-component=work_order_card] a.aria-print-link")).to_have_attribute(
        "href", "/workorders/77/print"
    )
    assert page.locator("#injected-render").count() == 0


def test_measurements_are_shown_rounded_by_the_shared_formatter(browser, aria_server):
    """4.5916 mm/s reads 4.59, 73.0555 °C reads 73.06 and 812.4 reads 812 (Aria.fmtNumber); whole
    numbers such as ids and counts stay as they are."""
    aria_server.create_user("nora", "render-pass-3", "operator")
    page = open_tab(browser, aria_server)
    sign_in(page, "nora", "render-pass-3", next_path="/")
    expect(page.locator("#ws-status")).to_have_attribute("data-status", "open")
    texts = page.evaluate(
        """() => {
          const text = (name, props) => AriaRender.component(name, props).textContent;
          return {
            bar: text("bar_chart", {title: "t", labels: ["a", "b"], values: [4.5916, 3], unit: "mm/s"}),
            match: text("pattern_match", {similarity: 0.9, current_pattern: {bearing_temp_c: {peak: 73.0555, duration_min: 12}},
                                          past_failure: {id: 3, signal_patterns: {bearing_temp_c: {peak: 812.4, duration_min: 15}}}}),
            card: text("unknown_card", {value: 4.5916, count: 7, list: [73.0555, "x"]}),
          };
        }"""
    )
    assert "4.59 mm/s" in texts["bar"] and "4.5916" not in texts["bar"] and "3 mm/s" in texts["bar"], texts
    assert "73.06" in texts["match"] and "812" in texts["match"] and "73.0555" not in texts["match"], texts
    assert "12" in texts["match"] and "812.4" not in texts["match"], texts
    assert "4.59" in texts["card"] and "7" in texts["card"] and "73.06, x" in texts["card"], texts
    assert "4.5916" not in texts["card"], texts

    # the activity feed's anomaly line, too (a feed of its own: no event published on the shared server)
    line = page.evaluate(
        """() => {
          const list = document.createElement("ol"), empty = document.createElement("p");
          const feed = AriaActivityFeed.create(list, empty, {liveAfter: 0});
          feed.add({id: 1, type: "anomaly_detected", cell_id: 3, signal_def_id: 12, value: 4.5916, threshold: 4.5,
                    work_order_id: null, time: "2026-11-30T04:30:00Z", severity: "alert", direction: "high"});
          return list.textContent;
        }"""
    )
    assert "4.59 (above 4.50)" in line and "4.5916" not in line, line
    page.context.close()
