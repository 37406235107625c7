"""A plugin as a declaration: what it answers and how. The manifest's capabilities are read
from the declaration, so an export that is written is also announced, and every export the
contract has gets a default (the host never calls one the manifest leaves out).

The exports themselves, with the contract's rules for errors, are ``guest.Answers``'.
"""

import inspect
import json
import sys
from dataclasses import dataclass
from typing import Any, Callable, get_type_hints

from . import imports, schema
from .contribution import Contribution
from .errors import PluginError
from .manifest import project_version
from .types import (
    CallContext,
    Capabilities,
    CommandSpec,
    Configured,
    Manifest,
    ToolCall,
    ToolSpec,
)


@dataclass
class Context:
    """What every call knows: the session, the parsed configuration (an instance of the
    plugin's config class, or None for a plugin without one), and where the turn is."""

    session_id: str
    config: Any
    model_calls: int
    turn_iteration: int


@dataclass
class _Tool:
    name: str
    description: str
    args: type | None
    run: Callable
    mutates: bool | Callable[[Context], bool]

    def spec(self, mutates: bool) -> ToolSpec:
        parameters = schema.schema_of(self.args) if self.args else {"type": "object", "properties": {},
                                                                      "additionalProperties": False}
        return ToolSpec(name=self.name, description=self.description, parameters=json.dumps(parameters),
                        mutates=mutates)

    def call(self, ctx: Context, arguments: str) -> str:
        try:
            raw = json.loads(arguments)
        except ValueError as error:
            raise PluginError(f"invalid arguments for `{self.name}`: not JSON: {error}") from None
        if self.args is None:
            if raw not in ({}, None):
                raise PluginError(f"invalid arguments for `{self.name}`: it takes none")
            return self.run(ctx)
        try:
            args = schema.parse(self.args, raw)
        except schema.ArgumentError as error:
            raise PluginError(f"invalid arguments for `{self.name}`: {error}") from None
        return self.run(ctx, args)


@dataclass
class _Command:
    name: str
    usage: str
    description: str
    run: Callable[[Context, str], str]


class Plugin:
    """A plugin: its name (also its state namespace), its version, its configuration class
    (a dataclass whose fields have defaults; None for a plugin that takes no configuration)
    and everything it answers, each given with a decorator.

    Without a version, the plugin's is its folder's ``pyproject.toml`` ``[project] version``
    (the nearest at or above the module that declares the plugin), as a Rust plugin's is its
    Cargo.toml's."""

    def __init__(self, name: str, version: str | None = None, config: type | None = None):
        if version is None:
            version = project_version(sys._getframe(1).f_globals.get("__file__"))
        self.name = name
        self.version = version
        self.config_class = config
        self.tools: list[_Tool] = []
        self.commands: list[_Command] = []
        self.hooks: dict[str, Callable] = {}

    # Declaring.

    def tool(self, name: str, description: str, mutating: bool | Callable[[Context], bool] = False):
        """A tool the model may call. The handler is ``f(ctx)`` or ``f(ctx, args)`` where the
        annotation of ``args`` (a dataclass or TypedDict) gives the JSON Schema; it returns
        the text the model reads, or raises (PluginError, or anything) with the error text.
        ``mutating`` marks a tool that changes things; a function of the context makes the
        tool's spec depend on state (it is then returned from ``provide`` on every call)."""

        def declare(run: Callable) -> Callable:
            parameters = list(inspect.signature(run).parameters)
            args = get_type_hints(run).get(parameters[1]) if len(parameters) > 1 else None
            if len(parameters) > 1 and args is None:
                raise TypeError(f"tool `{name}`: annotate `{parameters[1]}` with a dataclass or TypedDict")
            self.tools.append(_Tool(name, description, args, run, mutating))
            return run

        return declare

    def command(self, name: str, usage: str, description: str):
        """An operator command, ``/name``; the handler ``f(ctx, args)`` gets the text after the
        name, trimmed, and returns the answer."""

        def declare(run: Callable[[Context, str], str]) -> Callable:
            self.commands.append(_Command(name, usage, description, run))
            return run

        return declare

    def _hook(self, export: str) -> Callable:
        def declare(run: Callable) -> Callable:
            self.hooks[export] = run
            return run

        return declare

    @property
    def configure(self):
        """``f(config) -> list of requirements`` (``reads_state(ns)``, ``RUNS_PROCESSES``,
        ``NETWORK``): checks the parsed configuration beyond its type; raising refuses the load."""
        return self._hook("configure")

    @property
    def provide(self):
        """``f(ctx, contribution) -> contribution``, before each model call."""
        return self._hook("provide")

    @property
    def on_session_start(self):
        """``f(ctx) -> str | None``: context for the model when a session starts."""
        return self._hook("session_start")

    @property
    def on_user_prompt(self):
        """``f(ctx, prompt) -> PromptOutcome | None`` (``block(reason)``, ``add_context(text)``)."""
        return self._hook("user_prompt_submit")

    @property
    def on_pre_tool_use(self):
        """``f(ctx, tool_use) -> PreToolOutcome | None`` (``allow()``, ``ask(why)``, ``deny(why)``)."""
        return self._hook("pre_tool_use")

    @property
    def on_post_tool_use(self):
        """``f(ctx, tool_use, result) -> ToolResult | None``: a replacement result, or None."""
        return self._hook("post_tool_use")

    @property
    def on_stop(self):
        """``f(ctx, reply) -> str | None``: a message to continue the turn with, or None to stop."""
        return self._hook("stop")

    @property
    def on_turn_end(self):
        """``f(ctx, reply) -> TurnVerdict | None`` (``continue_turn(text)``,
        ``stop_turn(reason, message)``; None ends the turn as the model ended it): when the
        model ends a step without tool calls, after the ``on_stop`` hooks. A continuation is a
        request the host grants within ``[agent]``'s caps. Raising ends the turn (logged)."""
        return self._hook("turn_end")

    @property
    def on_review(self):
        """``f(ctx, tool_use, asked) -> ReviewVerdict | None`` (``approve()``, ``refuse(why)``,
        ``review_error(why)``; None abstains): before the operator is asked about a call the
        permission hooks would ask about, ``asked`` saying why. Raising is a failed review
        (``review_error``): the operator is asked, never an approval nor a denial."""
        return self._hook("review")

    @property
    def on_queued(self):
        """``f(ctx) -> str | None``: after an operator command, a prompt to run at once as a
        turn of its own (a goal just set starts working), or None. Raising queues nothing."""
        return self._hook("queued")

    @property
    def status(self):
        """``f(ctx) -> str | None``: one line for front ends (the current mode, say)."""
        return self._hook("status")

    @property
    def view(self):
        """``f(ctx) -> list of Choice | Checklist | Text``: what front ends show."""
        return self._hook("view")

    # Answering, in the SDK's types (``guest.Answers`` adds the contract's rules for errors).

    def manifest(self) -> Manifest:
        flags = Capabilities(0)
        declared = [
            ("provide" in self.hooks or any(callable(tool.mutates) for tool in self.tools), Capabilities.PROVIDE),
            (bool(self.tools), Capabilities.CALL_TOOL),
            (bool(self.commands), Capabilities.COMMAND),
            ("session_start" in self.hooks, Capabilities.SESSION_START),
            ("user_prompt_submit" in self.hooks, Capabilities.USER_PROMPT_SUBMIT),
            ("pre_tool_use" in self.hooks, Capabilities.PRE_TOOL_USE),
            ("post_tool_use" in self.hooks, Capabilities.POST_TOOL_USE),
            ("stop" in self.hooks, Capabilities.STOP),
            ("status" in self.hooks, Capabilities.STATUS),
        ]
        for present, flag in declared:
            if present:
                flags |= flag
        commands = [CommandSpec(name=c.name, description=c.description, usage=c.usage) for c in self.commands]
        return Manifest(name=self.name, version=self.version, capabilities=flags, commands=commands)

    def parse_config(self, raw: str) -> Any:
        table = json.loads(raw) if raw else None
        table = {} if table is None else table
        if self.config_class is None:
            if table:
                key = next(iter(table))
                raise PluginError(f"this plugin takes no configuration (found `{key}`); "
                                  "remove its [plugin.config] table")
            return None
        try:
            return schema.parse(self.config_class, table)
        except schema.ArgumentError as error:
            raise PluginError(str(error)) from None

    def configure_raw(self, raw: str) -> Configured:
        config = self.parse_config(raw)
        requires = self.hooks["configure"](config) if "configure" in self.hooks else []
        for tool in self.tools:
            if not callable(tool.mutates):
                imports.host().declare(tool.spec(tool.mutates))
        return Configured(config=json.dumps(schema.to_json(config) or {}), requires=list(requires or []))

    def context(self, raw: CallContext) -> Context:
        return Context(raw.session_id, self.parse_config(raw.config), raw.model_calls, raw.turn_iteration)

    def provide_raw(self, ctx: Context) -> Contribution:
        provided = [tool.spec(tool.mutates(ctx)) for tool in self.tools if callable(tool.mutates)]
        contribution = Contribution(provided)
        if "provide" not in self.hooks:
            return contribution.reusable()
        return self.hooks["provide"](ctx, contribution)

    def call_tool_raw(self, ctx: Context, call: ToolCall) -> str:
        tool = next((tool for tool in self.tools if tool.name == call.name), None)
        if tool is None:
            raise PluginError(f"the {self.name} plugin has no tool named `{call.name}`")
        return tool.call(ctx, call.arguments)

    def command_raw(self, ctx: Context, name: str, args: str) -> str:
        command = next((command for command in self.commands if command.name == name), None)
        if command is None:
            raise PluginError(f"the {self.name} plugin has no command named `/{name}`")
        return command.run(ctx, args.strip())
