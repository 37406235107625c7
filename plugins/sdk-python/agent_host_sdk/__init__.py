"""The Python guest SDK for agent-host plugins.

A plugin module defines ``plugin = Plugin(...)`` and declares what it answers with
decorators; the host's build exports it (``export(plugin)``) for the contract's
``judging-plugin`` world. Everything a plugin is handed or returns is one of the SDK's own
types, so its unit tests run natively through ``agent_host_sdk.testing.Harness``. See
docs/plugin-authoring.md for a plugin from an empty folder.
"""

from .contribution import Contribution
from .errors import PluginError
from .host import events, log, meter, model, process, reusable, state
from .outcomes import (
    NETWORK,
    RUNS_PROCESSES,
    Decision,
    PreToolOutcome,
    PromptOutcome,
    Requirement,
    add_context,
    allow,
    ask,
    block,
    deny,
    reads_state,
)
from .plugin import Context, Plugin
from .readings import Caps, ChatMessage, Completion, MeterReading, RunOutput, RunRequest, SessionReading
from .schema import ArgumentError, schema_of
from .types import CallContext, Capabilities, CommandSpec, Manifest, ToolCall, ToolResult, ToolSpec, ToolUse
from .verdicts import (
    BLOCKED,
    NEED_INPUT,
    TIME_BUDGET,
    TOKEN_BUDGET,
    JudgeSpec,
    ReviewVerdict,
    StopReason,
    TurnVerdict,
    abstain,
    approve,
    continue_turn,
    end_turn,
    refuse,
    review_error,
    stop_turn,
)
from .view import (
    COMPLETED,
    IN_PROGRESS,
    PENDING,
    Checklist,
    ChecklistEntry,
    ChecklistWidget,
    Choice,
    ChoiceOption,
    ChoiceWidget,
    EntryState,
    Text,
    TextWidget,
)


def export(plugin: Plugin):
    """The classes componentize-py instantiates for ``plugin``: only in a component, whose
    bindings ``component.py`` imports, so it is imported here when asked for."""
    from .component import export as exported

    return exported(plugin)


__all__ = [
    "ArgumentError", "BLOCKED", "COMPLETED", "CallContext", "Capabilities", "Caps", "ChatMessage", "Checklist",
    "ChecklistEntry", "ChecklistWidget", "Choice", "ChoiceOption", "ChoiceWidget", "CommandSpec", "Completion",
    "Context", "Contribution", "Decision", "EntryState", "IN_PROGRESS", "JudgeSpec", "Manifest", "MeterReading",
    "NEED_INPUT", "NETWORK", "PENDING", "Plugin", "PluginError", "PreToolOutcome", "PromptOutcome",
    "RUNS_PROCESSES", "Requirement", "ReviewVerdict", "RunOutput", "RunRequest", "SessionReading", "StopReason",
    "TIME_BUDGET", "TOKEN_BUDGET", "Text", "TextWidget", "ToolCall", "ToolResult", "ToolSpec", "ToolUse",
    "TurnVerdict", "abstain", "add_context", "allow", "approve", "ask", "block", "continue_turn", "deny",
    "end_turn", "events", "export", "log", "meter", "model", "process", "reads_state", "refuse", "reusable",
    "review_error", "schema_of", "state", "stop_turn",
]
