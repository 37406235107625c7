"""What the contract's calls carry, as the SDK's own types: what every call is sent, what a
hook is shown of a tool call, what a plugin declares. Plain dataclasses, with no import of the
bindings componentize-py generates, so a plugin and its unit tests see the same values in a
component and natively (``component.py`` converts them at the component's edge).
"""

import enum
from dataclasses import dataclass, field

from .outcomes import Requirement


@dataclass(frozen=True)
class CallContext:
    """What the host sends with every call, before the SDK parses the configuration into the
    plugin's ``Context``."""

    session_id: str
    config: str  # the configuration `configure` returned, as JSON
    model_calls: int
    turn_iteration: int


@dataclass(frozen=True)
class ToolCall:
    """A call of a tool, as the model made it."""

    id: str
    name: str
    arguments: str  # JSON text, as the model wrote it


@dataclass(frozen=True)
class ToolUse:
    """What a tool hook or a review is shown: the call, the plugin whose tool it is, and
    whether that tool changes things."""

    call: ToolCall
    plugin: str
    mutates: bool


@dataclass(frozen=True)
class ToolResult:
    """What a tool answered: its text, and whether it succeeded."""

    ok: bool
    output: str


@dataclass(frozen=True)
class ToolSpec:
    """A tool as the model is offered it."""

    name: str
    description: str
    parameters: str  # its JSON Schema, as JSON text
    mutates: bool


@dataclass(frozen=True)
class CommandSpec:
    """An operator command, `/name`."""

    name: str
    description: str
    usage: str


class Capabilities(enum.Flag):
    """The guest exports a plugin implements; the host never calls one left out."""

    PROVIDE = enum.auto()
    CALL_TOOL = enum.auto()
    COMMAND = enum.auto()
    SESSION_START = enum.auto()
    USER_PROMPT_SUBMIT = enum.auto()
    PRE_TOOL_USE = enum.auto()
    POST_TOOL_USE = enum.auto()
    STOP = enum.auto()
    STATUS = enum.auto()


@dataclass(frozen=True)
class Manifest:
    """Who the plugin is and which exports it implements."""

    name: str
    version: str
    capabilities: Capabilities
    commands: list[CommandSpec] = field(default_factory=list)


@dataclass(frozen=True)
class InjectedMessage:
    """A message `provide` adds to one model call only; role `system` or `user`."""

    role: str
    content: str


@dataclass(frozen=True)
class Configured:
    """What `configure` returns: the configuration every later call is sent (JSON, with its
    defaults filled in) and what it requires of the host."""

    config: str
    requires: list[Requirement] = field(default_factory=list)
