"""A harness's stand-in for the host: one session's state bag, the other plugins' namespaces
it may read, and a record of what calls emitted, logged and declared. It answers the SDK's
host calls (``imports.py``) as the host would, from memory.
"""

import json
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import PluginError
from ..readings import Caps, ChatMessage, Completion, MeterReading, RunOutput, RunRequest, SessionReading
from ..types import ToolSpec

ModelStandIn = Callable[[list[ChatMessage], "int | None"], Completion]
ProcessStandIn = Callable[[RunRequest], RunOutput]

# What `meter.read` answers until a test sets it: outside a turn, with the host's default caps.
_IDLE = MeterReading(turn_tokens=0, turn_model_calls=0, turn_ms=0, turn_continuations=0, caps=Caps(max_iterations=10))


@dataclass(frozen=True)
class Emitted:
    """An event a call emitted; ``payload`` as parsed JSON."""

    kind: str
    payload: Any
    display: str | None


class Session:
    def __init__(self):
        self.own: dict[str, str] = {}
        self.foreign: dict[tuple[str, str], str] = {}
        self.events: list[Emitted] = []
        self.logs: list[tuple[str, str]] = []
        self.reusable = False
        self.declared: list[ToolSpec] = []
        self.model: ModelStandIn | None = None
        self.asked: list[tuple[list[ChatMessage], int | None]] = []
        self.process: ProcessStandIn | None = None
        self.meter = _IDLE
        self.session_meter = SessionReading(tokens=0, model_calls=0)

    def state_get(self, key: str) -> str | None:
        return self.own.get(key)

    def state_set(self, key: str, value: str) -> None:
        try:
            json.loads(value)
        except ValueError as error:
            raise PluginError(str(error)) from None
        self.own[key] = value

    def state_remove(self, key: str) -> None:
        self.own.pop(key, None)

    def state_read(self, namespace: str, key: str) -> str | None:
        return self.foreign.get((namespace, key))

    def emit(self, kind: str, payload: str, display: str | None) -> None:
        self.events.append(Emitted(kind, json.loads(payload), display))

    def log(self, level: str, message: str) -> None:
        self.logs.append((level, message))

    def until_state_changes(self) -> None:
        self.reusable = True

    def declare(self, spec: ToolSpec) -> None:
        self.declared.append(spec)

    def meter_read(self) -> MeterReading:
        return self.meter

    def meter_session(self) -> SessionReading:
        return self.session_meter

    def complete(self, messages: list[ChatMessage], max_output_tokens: int | None) -> Completion:
        self.asked.append((list(messages), max_output_tokens))
        if self.model is None:
            raise PluginError("no model stand-in: call Harness.on_model first")
        return self.model(messages, max_output_tokens)

    def run(self, request: RunRequest) -> RunOutput:
        if self.process is None:
            raise PluginError("no process stand-in: call Harness.on_process first")
        return self.process(request)
