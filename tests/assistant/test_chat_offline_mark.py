"""POST /api/v1/agent/chat says which engine answered and, like the session's messages, `offline: true`
when it was the offline demo engine. The mark follows the engine actually used: an OpenAI engine
(a local server speaking the chat.completions wire format) answers without it."""

import pytest

from assistant.models import Message
from tests.fakes.agent_kit import engine_settings
from tests.fakes.openai_server import OpenAIFakeServer, openai_stream

pytestmark = pytest.mark.django_db
CHAT = "/api/v1/agent/chat"


def ask(client, text):
    response = client.post(CHAT, {"messages": [{"role": "user", "content": text}]}, content_type="application/json")
    assert response.status_code == 200, response.content
    return response.json()


def test_the_offline_engine_marks_its_answer_as_the_session_messages_do(client, operator, plant):
    client.force_login(operator)
    body = ask(client, "Why did P-02 trip?")
    assert body["offline"] is True and body["engine"] == "fake"
    stored = Message.objects.filter(session_id=body["session_id"], role="assistant").get()
    assert stored.metadata["offline"] is True  # the same field name, the same answer


def test_a_real_provider_answer_is_not_marked_even_when_it_reads_like_the_offline_one(client, operator):
    client.force_login(operator)
    with (
        OpenAIFakeServer() as server,
        engine_settings(OPENAI_API_KEY="sk-openai-test", OPENAI_BASE_URL=server.url + "/v1", ARIA_ENGINE="openai"),
    ):
        server.push(openai_stream(text="(offline fake engine) I received: hello"))  # wording is not the mark
        body = ask(client, "hello")
    assert len(server.chat_bodies()) == 1
    assert body["response"] == "(offline fake engine) I received: hello"
    assert body["offline"] is False and body["engine"] == "openai"
    stored = Message.objects.filter(session_id=body["session_id"], role="assistant").get()
    assert stored.metadata["offline"] is False
