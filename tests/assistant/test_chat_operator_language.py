"""The operator chat through its real REST route with the offline engine and the real maintenance
capabilities: questions in the operator's language find the cell's RCA by the equipment they name
and are answered in that language; KPI questions by cell and period; time windows become ranges."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine

pytest.importorskip("workorders.capabilities")

from core.capabilities import CapabilityContext, dispatch
from tests.workorders import factories as f
from workorders.models import FailureHistory

pytestmark = pytest.mark.django_db
RCA = "DE bearing wear: vibration 2 → 7.4 mm/s in an hour."


def ask(client, user, question: str) -> dict:
    client.force_login(user)
    response = client.post(
        "/api/v1/agent/chat", {"messages": [{"role": "user", "content": question}]}, content_type="application/json"
    )
    assert response.status_code == 200, response.content
    return response.json()


def calls(body: dict, name: str) -> list[dict]:
    return [c for c in body["tool_calls"] if c["name"] == name]


@pytest.fixture
def p02():
    cell = f.make_cell("P-02")
    f.ramp(f.make_signal(cell), peak=7.4)
    f.make_kb(cell)
    return cell


@pytest.mark.parametrize(
    ("question", "framing", "sources"),
    [
        ("pourquoi P-02 a déclenché ?", "Cause racine enregistrée", "Sources:"),
        ("¿Por qué se disparó la P-02?", "Causa raíz registrada", "Fuentes:"),
        ("Warum hat P-02 ausgelöst?", "Erfasste Ursache", "Quellen:"),
        ("Perché P-02 è scattato?", "Causa radice registrata", "Fonti:"),
        ("Por que a P-02 disparou?", "Causa raiz registada", "Fontes:"),
        ("Why did P-02 trip?", "Root cause on record", "Sources:"),
    ],
)
def test_why_did_p02_trip_in_each_language_finds_the_rca_and_answers_in_that_language(
    client, operator, p02, question, framing, sources
):
    # Given an analysed order on P-02 (its RCA is in English, as the Investigator wrote it)
    order = f.make_work_order(p02, status="analyzed", rca_summary=RCA)
    body = ask(client, operator, question)
    # the cell is resolved from the tag the question names, then the Investigator is asked about it
    (investigator,) = calls(body, "ask_investigator")
    assert investigator["args"]["cell_id"] == p02.pk and investigator["args"]["question"] == question
    assert f"From work_order #{order.pk}" in investigator["result_summary"]
    # the answer cites the RCA, framed in the operator's language
    assert f"{framing} (work_order #{order.pk})" in body["response"] and RCA in body["response"]
    assert sources in body["response"] and not body["error"]


def test_a_french_question_naming_the_pump_without_a_tag_resolves_it_through_the_plant_cells(client, operator, p02):
    order = f.make_work_order(p02, status="analyzed", rca_summary=RCA)
    body = ask(client, operator, "Pourquoi la pump p-02 s'est arrêtée ?")
    assert calls(body, "ask_investigator")[0]["args"]["cell_id"] == p02.pk
    assert f"Cause racine enregistrée (work_order #{order.pk})" in body["response"]


def test_equipment_named_without_a_tag_is_found_among_the_plant_cells(client, operator, p02):
    p02.name = "Bomba de alimentación"
    p02.save(update_fields=["name"])
    order = f.make_work_order(p02, status="analyzed", rca_summary=RCA)
    body = ask(client, operator, "¿Por qué se paró la bomba de alimentación?")
    assert body["tool_calls"][0]["name"] == "find_cells"
    assert calls(body, "ask_investigator")[0]["args"]["cell_id"] == p02.pk
    assert f"Causa raíz registrada (work_order #{order.pk})" in body["response"]


def test_a_cell_without_an_rca_is_said_so_in_the_operators_language_not_someone_elses_rca(client, operator, p02):
    # Given another cell's RCA on record, P-02 has none
    other = f.make_cell("C-01")
    f.make_work_order(other, status="analyzed", rca_summary="Clogged filter on C-01.")
    body = ask(client, operator, "Warum hat P-02 ausgelöst?")
    assert "Clogged filter" not in body["response"]
    assert "Keine Ursachenanalyse zu P-02" in body["response"]


def _failure(cell, when: datetime, *, confirmed: bool = True) -> FailureHistory:
    return FailureHistory.objects.create(
        cell=cell,
        failure_time=when,
        resolved_time=when + timedelta(hours=4),
        failure_mode="bearing_wear",
        verification="confirmed" if confirmed else "",
    )


@pytest.fixture
def november():
    """Three cells: C-01 failed often in October, P-02 most this month, F-03 never."""
    with time_machine.travel(datetime(2026, 11, 20, 12, 0, tzinfo=UTC), tick=False):
        p02, c01, f03 = f.make_cell("P-02"), f.make_cell("C-01"), f.make_cell("F-03")
        for day in (3, 9, 15):
            _failure(p02, datetime(2026, 11, day, 8, tzinfo=UTC))
        _failure(c01, datetime(2026, 11, 10, 8, tzinfo=UTC))
        for day in (2, 6, 12, 18, 24):
            _failure(c01, datetime(2026, 10, day, 8, tzinfo=UTC))
        _failure(f03, datetime(2026, 11, 5, tzinfo=UTC), confirmed=False)  # an unconfirmed RCA is no failure
        yield p02, c01, f03


def test_which_cell_has_the_worst_mtbf_this_month_ranks_every_cell_over_the_month(client, operator, november):
    body = ask(client, operator, "Which cell has the worst MTBF this month?")
    (mtbf,) = calls(body, "get_mtbf")
    assert mtbf["args"] == {"period": "this month"}  # every cell, this month
    # Nov 1 → Nov 20 12:00 is 468 h: P-02 (3 failures, 12 h repairs) 152 h, C-01 (1 failure) 464 h
    assert "Worst MTBF since 2026-11-01: P-02 (152.0 h)." in body["response"]
    assert "Ranking: P-02 152.0, C-01 464.0." in body["response"]

    # over the last 90 days C-01's October failures make it the worst: the period is what decides
    result = dispatch("workorders.get_mtbf", {"days": 90}, ctx=CapabilityContext(user=operator))
    assert result.content["worst"]["cell_tag"] == "C-01"
    assert [r["cell_tag"] for r in result.content["ranking"]] == ["C-01", "P-02", "F-03"]


def test_kpi_of_one_cell_since_monday_in_french(client, operator, november):
    p02, _, _ = november
    with time_machine.travel(datetime(2026, 11, 20, 12, 0, tzinfo=UTC), tick=False):
        body = ask(client, operator, "Quel est le MTTR de P-02 ce mois-ci ?")
    (mttr,) = calls(body, "get_mttr")
    assert mttr["args"] == {"cell_id": p02.pk, "period": "this month"}
    assert "MTTR de P-02 depuis le 2026-11-01 : 4.0 h." in body["response"]


def test_kpi_period_and_since_are_checked(operator, november):
    ctx = CapabilityContext(user=operator)
    unknown = dispatch("workorders.get_mtbf", {"period": "whenever"}, ctx=ctx)
    assert unknown.is_error and "period" in unknown.message
    future = dispatch("workorders.get_oee", {"since": "2999-01-01T00:00:00Z"}, ctx=ctx)
    assert future.is_error and "since" in future.message
    missing = dispatch("workorders.get_mttr", {"cell_id": 999999, "period": "this month"}, ctx=ctx)
    assert missing.is_error and "999999" in missing.message


@pytest.mark.parametrize(
    "question", ["Show me the vibration of P-02 over the last 6 hours", "Montre P-02 sur les 6 dernières heures"]
)
def test_last_six_hours_asks_the_trend_and_the_chart_for_six_hours(client, operator, p02, question):
    body = ask(client, operator, question)
    (trend,) = calls(body, "get_signal_trends")
    assert trend["args"]["minutes"] == 360 and trend["args"]["hours"] == 6.0
    assert "over 360 min" in trend["result_summary"]
    assert calls(body, "render_signal_chart")[0]["args"]["minutes"] == 360


def test_without_a_window_the_trend_covers_a_day(client, operator, p02):
    body = ask(client, operator, "What is the vibration of P-02?")
    assert calls(body, "get_signal_trends")[0]["args"]["minutes"] == 24 * 60


def test_trend_since_is_turned_into_minutes_and_bounded(operator, p02):
    ctx = CapabilityContext(user=operator)
    with time_machine.travel(datetime(2026, 11, 19, 15, 30, tzinfo=UTC), tick=False):
        since_monday = dispatch(
            "workorders.get_signal_trends", {"cell_id": p02.pk, "since": "2026-11-16T00:00:00Z"}, ctx=ctx
        )
        too_far = dispatch(
            "workorders.get_signal_trends", {"cell_id": p02.pk, "since": "2026-10-01T00:00:00Z"}, ctx=ctx
        )
    assert not since_monday.is_error and since_monday.content["minutes"] == (3 * 24 + 15) * 60 + 30
    assert too_far.is_error and "since" in too_far.message
