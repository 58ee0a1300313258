from django.urls import path

from assistant.consumers import AgentChatConsumer

websocket_urlpatterns = [path("ws/agent/chat", AgentChatConsumer.as_asgi())]
