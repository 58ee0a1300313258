"""The one shared client library (static/aria/lib.js, window.Aria) every page script uses: an API
error reaches the page as the server's field and detail, and the error object carries status, code
and field; unsafe methods carry the CSRF token."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.tabs import sign_in

pytestmark = pytest.mark.browser


def test_a_422_shows_the_field_and_the_error_carries_status_code_and_field(page, aria_server):
    aria_server.create_user("lena", "shared-lib-pass-1", "operator")
    sign_in(page, "lena", "shared-lib-pass-1", next_path="/alarms/performance/")
    expect(page.locator("#perf-status")).to_have_attribute("data-status", "open")

    # Given a window length the API refuses (0 hours), chosen in the page's own form
    page.evaluate(
        """() => {
          const select = document.querySelector('#perf-window select[name=hours]');
          const option = document.createElement('option');
          option.value = '0';
          option.textContent = 'hostile';
          select.appendChild(option);
          select.value = '0';
          select.dispatchEvent(new Event('change', { bubbles: true }));
        }"""
    )
    # Then the page says which field is wrong, once, and keeps the status as an error
    message = page.locator("#perf-msg")
    expect(message).to_be_visible()
    expect(message).to_contain_text("hours: ")
    assert not message.inner_text().startswith("hours: hours:")
    expect(page.locator("#perf-status")).to_have_attribute("data-status", "closed")

    error = page.evaluate(
        """() => Aria.api('GET', '/api/v1/alarm-performance?hours=0').then(
             () => null,
             (e) => ({ name: e.name, status: e.status, code: e.code, field: e.field, message: e.message }))"""
    )
    assert error["name"] == "ApiError"
    assert (error["status"], error["code"], error["field"]) == (422, "invalid", "hours")
    assert error["message"].startswith("hours: ")

    # A 404 for an unknown line names line_id the same way
    missing = page.evaluate(
        """() => Aria.api('GET', '/api/v1/alarm-performance?line_id=999999').catch(
             (e) => ({ status: e.status, field: e.field, message: e.message }))"""
    )
    assert missing["status"] == 404
    assert missing["field"] == "line_id"
    assert missing["message"].startswith("line_id: ")


def test_an_unsafe_call_without_the_csrf_cookie_is_refused_and_with_it_passes(page, aria_server):
    aria_server.create_user("mika", "shared-lib-pass-2", "operator")
    sign_in(page, "mika", "shared-lib-pass-2", next_path="/plans/")
    expect(page.locator("#plans-list")).to_be_attached()
    page.wait_for_function("() => window.Aria !== undefined")  # lib.js is deferred: it runs after parsing

    # With the cookie, Aria.api sends X-CSRFToken and the server accepts the POST (a coordinator turn)
    sent = page.evaluate(
        """() => Aria.api('POST', '/api/v1/aria/coordinator/turns', { message: 'what is open?' })
             .then((turn) => ({ ok: true, status: turn.status }), (e) => ({ ok: false, status: e.status }))"""
    )
    assert sent["ok"], sent

    # Hostile: the same call with the CSRF cookie gone is refused, and the error says so
    page.context.clear_cookies(name="csrftoken")
    refused = page.evaluate(
        """() => Aria.api('POST', '/api/v1/aria/coordinator/turns', { message: 'what is open?' })
             .then(() => null, (e) => ({ name: e.name, status: e.status, message: e.message }))"""
    )
    assert refused is not None
    assert refused["name"] == "ApiError"
    assert refused["status"] == 403
