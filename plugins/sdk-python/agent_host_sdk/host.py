"""What the host lends a plugin during a call, typed: the session's state bag, events, the
log, and (where granted) the deployment's model and a sandboxed process.

Every function raises ``PluginError`` with the host's message when the host refuses, so a
tool that lets it propagate answers the model with that message.
"""

import json
from dataclasses import dataclass
from typing import Any

from componentize_py_types import Err
from wit_world.imports import events as _events
from wit_world.imports import log as _log
from wit_world.imports import meter as _meter
from wit_world.imports import model as _model
from wit_world.imports import process as _process
from wit_world.imports import reuse as _reuse
from wit_world.imports import state as _state


class PluginError(Exception):
    """An error whose message goes back as it is: to the model from a tool, to the operator
    from a command or a configuration."""


def _host(call):
    """Runs a host call, turning its error into a PluginError with the host's message."""
    try:
        return call()
    except Err as error:
        raise PluginError(str(error.value)) from None


class state:
    """The session's state bag: keys of this plugin's namespace, as JSON values. Writes take
    effect when the call succeeds; a call that fails leaves the bag untouched."""

    @staticmethod
    def get(key: str, default: Any = None) -> Any:
        raw = _state.get(key)
        return default if raw is None else _decode(key, raw)

    @staticmethod
    def set(key: str, value: Any) -> None:
        _host(lambda: _state.set(key, json.dumps(value)))

    @staticmethod
    def remove(key: str) -> None:
        _state.remove(key)

    @staticmethod
    def read(namespace: str, key: str, default: Any = None) -> Any:
        """A key of another plugin's namespace; needs `read_state = ["NAMESPACE"]` among the
        plugin's grants in config.toml."""
        raw = _host(lambda: _state.read(namespace, key))
        return default if raw is None else _decode(key, raw)


def _decode(key: str, raw: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError as error:
        raise PluginError(f"stored `{key}` is not JSON: {error}") from None


class events:
    @staticmethod
    def emit(kind: str, payload: Any, display: str | None = None) -> None:
        """Tells front ends something happened; ``display`` is how a person reads it."""
        _events.emit(kind, json.dumps(payload), display)


class log:
    """Lines in the host's log, under the plugin's name."""

    @staticmethod
    def trace(message: str) -> None:
        _log.write(_log.Level.TRACE, message)

    @staticmethod
    def debug(message: str) -> None:
        _log.write(_log.Level.DEBUG, message)

    @staticmethod
    def info(message: str) -> None:
        _log.write(_log.Level.INFO, message)

    @staticmethod
    def warn(message: str) -> None:
        _log.write(_log.Level.WARN, message)

    @staticmethod
    def error(message: str) -> None:
        _log.write(_log.Level.ERROR, message)


def reusable() -> None:
    """Tells the host this call's contribution depends only on the configuration and the
    state it read, so it may be reused until that state changes (see the Rust SDK's
    ``Contribution::reusable``)."""
    _reuse.until_state_changes()


class meter:
    @staticmethod
    def read() -> "_meter.Reading":
        """What the running turn has spent (`turn_tokens`, `turn_model_calls`, `turn_ms`,
        `turn_continuations`) and the deployment's `caps` on it (contract 0.2.6); outside a
        turn every count is zero."""
        return _meter.read()

    @staticmethod
    def session() -> "_meter.SessionReading":
        """What the whole session has spent (`tokens`, its plugins' model calls included, and
        `model_calls`), the running turn included (contract 0.2.7)."""
        return _meter.session()


@dataclass
class Completion:
    text: str
    input_tokens: int
    output_tokens: int


class model:
    @staticmethod
    def complete(messages: list[tuple[str, str]], max_output_tokens: int | None = None) -> Completion:
        """Asks the deployment's model; needs `model = true` among the plugin's grants.
        ``messages`` are (role, content) pairs, role one of system, user, assistant."""
        roles = {"system": _model.ChatRole.SYSTEM, "user": _model.ChatRole.USER,
                 "assistant": _model.ChatRole.ASSISTANT}
        chat = [_model.ChatMessage(role=roles[role], content=content) for role, content in messages]
        done = _host(lambda: _model.complete(chat, _model.CompleteOptions(max_output_tokens=max_output_tokens)))
        return Completion(done.text, done.input_tokens, done.output_tokens)


class process:
    @staticmethod
    def run(command: str, timeout_ms: int = 30_000, max_output_bytes: int = 65_536) -> "_process.RunOutput":
        """Runs ``command`` in the host's sandbox; needs the `process` grant."""
        request = _process.RunRequest(command=command, timeout_ms=timeout_ms, max_output_bytes=max_output_bytes)
        return _host(lambda: _process.run(request))
