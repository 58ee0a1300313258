"""Plant connectors: MQTT (JSON topics, Sparkplug B) and OPC UA feeding the ingest service.

`supervisor.ConnectorSupervisor.run(stop_event)` is what `manage.py run_connectors` runs (and
what `runaria` runs in a thread): it starts a session per enabled `Connector`, drains what each
session received into `samples_ingest` (same validation and on-ingest evaluation as the API),
marks signals stale on a Sparkplug death certificate or a bad OPC UA status, and writes each
connector's status (admin list) and publishes `connector_status` on the bus when it changes.

Network clients run in their own threads (paho's loop, an asyncio loop for asyncua) and only
append to a thread-safe `Feed`; all database work happens in the supervisor's thread.
"""
