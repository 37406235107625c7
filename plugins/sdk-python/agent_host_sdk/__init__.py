"""The Python guest SDK for agent-host plugins.

A plugin module defines ``plugin = Plugin(...)`` and declares what it answers with
decorators; the host's build exports it (``export(plugin)``) for the contract's
``judging-plugin`` world. See docs/plugin-authoring.md for a plugin from an empty folder.
"""

from .export import export
from .host import Completion, PluginError, events, log, meter, model, process, reusable, state
from .plugin import (
    BLOCKED,
    NEED_INPUT,
    NETWORK,
    RUNS_PROCESSES,
    TIME_BUDGET,
    TOKEN_BUDGET,
    Context,
    Contribution,
    Plugin,
    add_context,
    allow,
    approve,
    ask,
    block,
    continue_turn,
    deny,
    reads_state,
    refuse,
    review_error,
    stop_turn,
)
from .schema import ArgumentError, schema_of
from .view import COMPLETED, IN_PROGRESS, PENDING, Checklist, Choice, Text

__all__ = [
    "ArgumentError", "BLOCKED", "COMPLETED", "Checklist", "Choice", "Completion", "Context",
    "Contribution", "IN_PROGRESS", "NEED_INPUT", "NETWORK", "PENDING", "Plugin", "PluginError",
    "RUNS_PROCESSES", "TIME_BUDGET", "TOKEN_BUDGET", "Text", "add_context", "allow", "approve",
    "ask", "block", "continue_turn", "deny", "events", "export", "log", "meter", "model",
    "process", "reads_state", "refuse", "reusable", "review_error", "schema_of", "state",
    "stop_turn",
]
