"""The component's host: the contract's imports as componentize-py generates them, answering
in the SDK's own types (see ``imports.py`` for what a host is). ``export`` installs it; only a
component has the bindings it imports.
"""

from componentize_py_types import Err
from wit_world.imports import events as _events
from wit_world.imports import log as _log
from wit_world.imports import meter as _meter
from wit_world.imports import model as _model
from wit_world.imports import process as _process
from wit_world.imports import reuse as _reuse
from wit_world.imports import state as _state
from wit_world.imports import tools as _tools
from wit_world.imports import types as _types

from .errors import PluginError
from .readings import (
    Caps,
    ChatMessage,
    Completion,
    MeterReading,
    RunOutput,
    RunRequest,
    SessionReading,
)
from .types import ToolSpec


def _host(call):
    """Runs a host call, turning its error into a PluginError with the host's message."""
    try:
        return call()
    except Err as error:
        raise PluginError(str(error.value)) from None


class ComponentHost:
    def state_get(self, key: str) -> str | None:
        return _state.get(key)

    def state_set(self, key: str, value: str) -> None:
        _host(lambda: _state.set(key, value))

    def state_remove(self, key: str) -> None:
        _state.remove(key)

    def state_read(self, namespace: str, key: str) -> str | None:
        return _host(lambda: _state.read(namespace, key))

    def emit(self, kind: str, payload: str, display: str | None) -> None:
        _events.emit(kind, payload, display)

    def log(self, level: str, message: str) -> None:
        _log.write(getattr(_log.Level, level.upper()), message)

    def until_state_changes(self) -> None:
        _reuse.until_state_changes()

    def declare(self, spec: ToolSpec) -> None:
        _tools.declare(_types.ToolSpec(name=spec.name, description=spec.description, parameters=spec.parameters,
                                       mutates=spec.mutates))

    def meter_read(self) -> MeterReading:
        raw = _meter.read()
        caps = Caps(raw.caps.max_iterations, raw.caps.max_turn_tokens, raw.caps.max_turn_secs,
                    raw.caps.max_continuations)
        return MeterReading(raw.turn_tokens, raw.turn_model_calls, raw.turn_ms, raw.turn_continuations, caps)

    def meter_session(self) -> SessionReading:
        raw = _meter.session()
        return SessionReading(raw.tokens, raw.model_calls)

    def complete(self, messages: list[ChatMessage], max_output_tokens: int | None) -> Completion:
        chat = [_model.ChatMessage(role=getattr(_model.ChatRole, message.role.upper()), content=message.content)
                for message in messages]
        options = _model.CompleteOptions(max_output_tokens=max_output_tokens)
        done = _host(lambda: _model.complete(chat, options))
        return Completion(done.text, done.input_tokens, done.output_tokens)

    def run(self, request: RunRequest) -> RunOutput:
        raw = _host(lambda: _process.run(_process.RunRequest(
            command=request.command, timeout_ms=request.timeout_ms, max_output_bytes=request.max_output_bytes)))
        return RunOutput(raw.status, raw.stdout, raw.stderr, raw.timed_out, raw.truncated, raw.timeout_cut_to_ms)
