import pytest

pytestmark = pytest.mark.django_db


def test_plans_page_needs_login(client):
    response = client.get("/plans/")
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_plans_page_is_a_static_shell_without_inline_script(client, operator):
    client.force_login(operator)
    response = client.get("/plans/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'src="/static/orchestrator/plans.js"' in html and 'src="/static/aria/events.js"' in html
    assert "<script>" not in html  # CSP: static scripts only
    assert "csrftoken" in response.cookies
    assert "script-src 'self'" in response.get("Content-Security-Policy", "")


def test_seed_creates_one_demo_plan_idempotently(make_user):
    import io

    from orchestrator.models import Plan
    from orchestrator.seed import seed

    make_user("operator", "operator")
    out = io.StringIO()
    seed(out)
    seed(out)
    assert Plan.objects.count() == 1 and Plan.objects.get().status == "draft"
    assert "already present" in out.getvalue()
