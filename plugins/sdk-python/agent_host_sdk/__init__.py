"""The Python guest SDK for agent-host plugins.

A plugin module defines ``plugin = Plugin(...)`` and declares what it answers with
decorators; the host's build exports it (``export(plugin)``) for the contract's
``viewing-plugin`` world. See docs/plugin-authoring.md for a plugin from an empty folder.
"""

from .export import export
from .host import Completion, PluginError, events, log, meter, model, process, reusable, state
from .plugin import (
    NETWORK,
    RUNS_PROCESSES,
    Context,
    Contribution,
    Plugin,
    add_context,
    allow,
    ask,
    block,
    deny,
    reads_state,
)
from .schema import ArgumentError, schema_of
from .view import COMPLETED, IN_PROGRESS, PENDING, Checklist, Choice, Text

__all__ = [
    "ArgumentError", "COMPLETED", "Checklist", "Choice", "Completion", "Context", "Contribution",
    "IN_PROGRESS", "NETWORK", "PENDING", "Plugin", "PluginError", "RUNS_PROCESSES", "Text",
    "add_context", "allow", "ask", "block", "deny", "events", "export", "log", "meter", "model",
    "process", "reads_state", "reusable", "schema_of", "state",
]
