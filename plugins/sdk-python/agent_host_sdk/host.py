"""What the host lends a plugin during a call, typed: the session's state bag, events, the
log, and (where granted) the deployment's model and a sandboxed process.

Every function raises ``PluginError`` with the host's message when the host refuses, so a
tool that lets it propagate answers the model with that message.
"""

import json
from typing import Any

from . import imports
from .errors import PluginError
from .readings import ChatMessage, Completion, MeterReading, RunOutput, RunRequest, SessionReading


class state:
    """The session's state bag: keys of this plugin's namespace, as JSON values. Writes take
    effect when the call succeeds; a call that fails leaves the bag untouched."""

    @staticmethod
    def get(key: str, default: Any = None) -> Any:
        raw = imports.host().state_get(key)
        return default if raw is None else _decode(key, raw)

    @staticmethod
    def set(key: str, value: Any) -> None:
        """Writes `key`; from `configure` (contract 0.2.10) it seeds the key for every session
        created while that configuration is loaded."""
        imports.host().state_set(key, json.dumps(value))

    @staticmethod
    def remove(key: str) -> None:
        imports.host().state_remove(key)

    @staticmethod
    def read(namespace: str, key: str, default: Any = None) -> Any:
        """A key of another plugin's namespace; needs `read_state = ["NAMESPACE"]` among the
        plugin's grants in config.toml."""
        raw = imports.host().state_read(namespace, key)
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
        imports.host().emit(kind, json.dumps(payload), display)


class log:
    """Lines in the host's log, under the plugin's name."""

    @staticmethod
    def trace(message: str) -> None:
        imports.host().log("trace", message)

    @staticmethod
    def debug(message: str) -> None:
        imports.host().log("debug", message)

    @staticmethod
    def info(message: str) -> None:
        imports.host().log("info", message)

    @staticmethod
    def warn(message: str) -> None:
        imports.host().log("warn", message)

    @staticmethod
    def error(message: str) -> None:
        imports.host().log("error", message)


def reusable() -> None:
    """Tells the host what this ``provide`` (or, since contract 0.2.9, ``view``; since 0.2.11,
    ``stop``) call returns depends only on the configuration and the state it read, so it may
    be reused without a call, in any session, until that state changes (see the Rust SDK's
    ``Contribution::reusable``, ``Plugin::view_from_state`` and
    ``Plugin::on_stop_from_state``)."""
    imports.host().until_state_changes()


class meter:
    @staticmethod
    def read() -> MeterReading:
        """What the running turn has spent (`turn_tokens`, `turn_model_calls`, `turn_ms`,
        `turn_continuations`) and the deployment's `caps` on it (contract 0.2.6); outside a
        turn every count is zero."""
        return imports.host().meter_read()

    @staticmethod
    def session() -> SessionReading:
        """What the whole session has spent (`tokens`, its plugins' model calls included, and
        `model_calls`), the running turn included (contract 0.2.7)."""
        return imports.host().meter_session()


_ROLES = ("system", "user", "assistant")


class model:
    @staticmethod
    def complete(messages: list[tuple[str, str]], max_output_tokens: int | None = None) -> Completion:
        """Asks the deployment's model; needs `model = true` among the plugin's grants.
        ``messages`` are (role, content) pairs, role one of system, user, assistant."""
        for role, _ in messages:
            if role not in _ROLES:
                raise PluginError(f"`{role}` is not a chat role: system, user or assistant")
        chat = [ChatMessage(role, content) for role, content in messages]
        return imports.host().complete(chat, max_output_tokens)


class process:
    @staticmethod
    def run(command: str, timeout_ms: int = 30_000, max_output_bytes: int = 65_536) -> RunOutput:
        """Runs ``command`` in the host's sandbox; needs the `process` grant."""
        return imports.host().run(RunRequest(command, timeout_ms, max_output_bytes))
