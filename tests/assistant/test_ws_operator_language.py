"""The drawer's chat socket: a French question gets a French answer citing the cell's RCA."""

import pytest
from asgiref.sync import sync_to_async

pytest.importorskip("workorders.capabilities")

from tests.workorders import factories as f

from .test_ws import _connect, _until_done

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]
RCA = "DE bearing wear: vibration 2 → 7.4 mm/s in an hour."


def _p02_with_rca() -> int:
    cell = f.make_cell("P-02")
    f.ramp(f.make_signal(cell), peak=7.4)
    return f.make_work_order(cell, status="analyzed", rca_summary=RCA).pk


async def test_pourquoi_p02_a_declenche_over_the_socket(operator):
    order_id = await sync_to_async(_p02_with_rca)()
    communicator, connected = await _connect(operator)
    assert connected
    await communicator.send_json_to({"type": "user", "content": "pourquoi P-02 a déclenché ?"})
    frames = await _until_done(communicator)
    await communicator.disconnect()

    assert frames[-1] == {"type": "done"}
    assert "ask_investigator" in [fr["name"] for fr in frames if fr["type"] == "tool_call"]
    answer = "".join(fr["content"] for fr in frames if fr["type"] == "text_delta")
    assert answer.startswith("À propos de P-02 : Cause racine enregistrée")
    assert f"(work_order #{order_id})" in answer and RCA in answer
