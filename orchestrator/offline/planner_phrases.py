"""The planner's goal words for the offline stand-ins (the coordinator's reading, the planner).

They live in `orchestrator.planning.phrases` (the real planners read them too, and this package is
loaded only with the fake engine); re-exported here for the stand-ins.
"""

from orchestrator.planning.phrases import (  # noqa: F401
    ALARMS,
    EQUIPMENT_NOUNS,
    INVESTIGATE,
    LINE,
    LINE_NUMBER_WORDS,
    OPEN_ALARM_STATES,
    ORDER_STATUS,
    REPAIR,
    SET_WORDS,
    WORK_ORDERS,
)
