"""workorders/README.md is the app's contract: it names what the app registers, so it cannot drift."""

from pathlib import Path

import workorders
import workorders.services
from core.capabilities import registry
from workorders import tasks
from workorders.api import router

README = Path(workorders.__file__).parent / "README.md"


def text() -> str:
    return README.read_text()


def test_readme_names_every_capability_task_route_and_service():
    doc = text()
    tools = [c.name.rsplit(".", 1)[-1] for c in registry.all() if c.name.startswith("workorders.")]
    assert tools and [t for t in tools if f"`{t}`" not in doc] == []
    task_names = [tasks.investigate_task.name, tasks.generate_task.name]
    assert [t for t in task_names if f"`{t}`" not in doc] == []
    paths = {path for path in router.path_operations}
    assert [p for p in paths if p and f"`{p}`" not in doc] == []
    for name in workorders.services.__all__:
        if name != "merge_patch":
            assert f"`{name}" in doc, name
    for event in ("anomaly_detected", "alert_banner", "rca_ready", "work_order_ready"):
        assert f"`{event}`" in doc, event
