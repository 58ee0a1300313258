"""WebSocket transport for the event bus: /ws/events?after=<id>."""

from channels.generic.websocket import AsyncJsonWebsocketConsumer

from core.events.transport import EVENTS_GROUP


class EventsConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        await self.accept()
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        await self.channel_layer.group_add(EVENTS_GROUP, self.channel_name)

    async def disconnect(self, code: int) -> None:
        await self.channel_layer.group_discard(EVENTS_GROUP, self.channel_name)

    async def bus_event(self, message: dict) -> None:
        await self.send_json(message["frame"])
