"""A plugin configured as the host would configure it, with calls made as the host makes
them, natively, in a session of its own (``Session``): the Python counterpart of the Rust
SDK's ``testing::Harness``.

State goes in (``store``, ``store_foreign``), a call is made, and what it wrote and emitted
comes out (``stored``, ``take_events``), with the host's rules for what a call keeps:

- a tool or a command that returns an error (raises) changes no state; its events stand, as
  the host hands them on;
- ``status`` and ``view`` change nothing: their state writes and events are dropped;
- a call that traps (a hook that raises where the contract has no error to carry it) keeps
  nothing, and the harness raises ``Trapped``.
"""

import json
from typing import Any, Callable

from .. import imports
from ..contribution import Contribution
from ..errors import PluginError
from ..guest import Answers, Failed, Trapped
from ..outcomes import PreToolOutcome, PromptOutcome, Requirement
from ..plugin import Plugin
from ..readings import MeterReading, SessionReading
from ..types import CallContext, Manifest, ToolCall, ToolResult, ToolSpec, ToolUse
from ..verdicts import JudgeSpec, ReviewVerdict, TurnVerdict
from ..view import Widget
from .session import Emitted, ModelStandIn, ProcessStandIn, Session

CALL_ID = "call-1"


class Harness:
    """``Harness(plugin, config)`` configures ``plugin`` with ``config`` (the
    ``[plugin.config]`` table as a dict; None for none), raising ``PluginError`` with the
    load error the host would show. ``model_calls`` and ``turn_iteration`` are what the next
    call's context says (0: an operator's command or a direct call)."""

    def __init__(self, plugin: Plugin, config: dict | None = None):
        self.session = Session()
        self.model_calls = 0
        self.turn_iteration = 0
        self._answers = Answers(plugin)
        configured = self._result(lambda: self._answers.configure(json.dumps({} if config is None else config)))
        self._config = configured.config
        self.requires: list[Requirement] = configured.requires
        self.declared: list[ToolSpec] = list(self.session.declared)

    @property
    def config(self) -> Any:
        """The configuration every call sees, as JSON values."""
        return json.loads(self._config)

    # State in, and what calls wrote, emitted and logged out.

    def store(self, key: str, value: Any) -> None:
        """Stores ``value`` under ``key`` in the plugin's namespace, as an earlier call would have."""
        self.session.own[key] = json.dumps(value)

    def store_foreign(self, namespace: str, key: str, value: Any) -> None:
        """Stores ``value`` under ``key`` in another plugin's namespace, for ``state.read``."""
        self.session.foreign[(namespace, key)] = json.dumps(value)

    def stored(self, key: str, default: Any = None) -> Any:
        """The value under ``key`` in the plugin's namespace."""
        raw = self.session.own.get(key)
        return default if raw is None else json.loads(raw)

    def take_events(self) -> list[Emitted]:
        """The events emitted since the last take."""
        events, self.session.events = self.session.events, []
        return events

    @property
    def logs(self) -> list[tuple[str, str]]:
        """The log lines written so far, as (level, message)."""
        return list(self.session.logs)

    def take_reusable(self) -> bool:
        """Whether a call since the last look declared its contribution reusable."""
        reusable, self.session.reusable = self.session.reusable, False
        return reusable

    def on_model(self, answer: ModelStandIn) -> None:
        """Answers ``model.complete`` with ``answer(messages, max_output_tokens)`` from now on
        (without it, calls fail)."""
        self.session.model = answer

    def take_model_requests(self) -> list:
        """What ``model.complete`` was asked since the last take: (messages, max_output_tokens)."""
        asked, self.session.asked = self.session.asked, []
        return asked

    def on_process(self, run: ProcessStandIn) -> None:
        """Answers ``process.run`` with ``run(request)`` from now on (without it, runs fail)."""
        self.session.process = run

    def set_meter(self, reading: MeterReading) -> None:
        """What ``meter.read`` answers; unset, a reading outside a turn with default caps."""
        self.session.meter = reading

    def set_session_meter(self, reading: SessionReading) -> None:
        """What ``meter.session`` answers; unset, every count is zero."""
        self.session.session_meter = reading

    # Calls, as the host makes them.

    def manifest(self) -> Manifest:
        return self._call(self._answers.manifest)

    def provide(self) -> Contribution:
        """What the host offers before a model call: the declared tools, then what ``provide``
        contributes, its own tools after them."""
        contribution = self._call(lambda: self._answers.provide(self._ctx()))
        contribution.tools[0:0] = self.declared
        return contribution

    def tool(self, name: str, arguments: dict | None = None) -> str:
        """A call of the tool ``name``: its text, or ``PluginError`` with the error text."""
        call = ToolCall(CALL_ID, name, json.dumps({} if arguments is None else arguments))
        return self._result(lambda: self._answers.call_tool(self._ctx(), call))

    def command(self, name: str, args: str = "") -> str:
        """The operator command ``/name args``: its answer, or ``PluginError`` with the error text."""
        return self._result(lambda: self._answers.command(self._ctx(), name, args))

    def session_start(self) -> str | None:
        return self._call(lambda: self._answers.session_start(self._ctx()))

    def user_prompt(self, prompt: str) -> PromptOutcome:
        return self._call(lambda: self._answers.user_prompt_submit(self._ctx(), prompt))

    def pre_tool_use(self, plugin: str, tool: str, arguments: dict | None = None,
                     mutates: bool = False) -> PreToolOutcome:
        """``on_pre_tool_use`` of a call of ``tool`` (offered by ``plugin``)."""
        return self._call(lambda: self._answers.pre_tool_use(self._ctx(), _use(plugin, tool, arguments, mutates)))

    def post_tool_use(self, plugin: str, tool: str, output: str, ok: bool = True,
                      mutates: bool = False) -> ToolResult | None:
        """``on_post_tool_use`` of a call of ``tool`` that answered ``output``: the replacement,
        or None."""
        use, result = _use(plugin, tool, None, mutates), ToolResult(ok, output)
        return self._call(lambda: self._answers.post_tool_use(self._ctx(), use, result))

    def stop(self, reply: str = "done") -> str | None:
        """``on_stop``: the message the turn goes on with, or None."""
        return self._call(lambda: self._answers.stop(self._ctx(), reply))

    def status(self) -> str | None:
        """``status``; as in the host, its state writes and events are dropped."""
        return self._without_effects(lambda: self._answers.status(self._ctx()))

    def shows(self) -> bool:
        """Whether the plugin has a view, as the host asks once per load."""
        return self._answers.shows(self._config)

    def view(self) -> list[Widget]:
        """What front ends would show now; as in the host, its state writes and events are
        dropped."""
        return self._without_effects(lambda: self._answers.view(self._ctx()))

    def judge_spec(self) -> JudgeSpec:
        return self._answers.judge_spec(self._config)

    def turn_end(self, reply: str) -> TurnVerdict:
        """``on_turn_end`` with the model's final text ``reply``."""
        return self._call(lambda: self._answers.turn_end(self._ctx(), reply))

    def review(self, plugin: str, tool: str, arguments: dict | None, asked: str) -> ReviewVerdict:
        """``on_review`` of a call of ``tool`` (offered by ``plugin``), asked about for ``asked``."""
        return self._call(lambda: self._answers.review(self._ctx(), _use(plugin, tool, arguments, True), asked))

    def queued(self) -> str | None:
        """``on_queued``, as after an operator command."""
        return self._call(lambda: self._answers.queued(self._ctx()))

    # The host's rules for what a call keeps.

    def _ctx(self) -> CallContext:
        return CallContext("test-session", self._config, self.model_calls, self.turn_iteration)

    def _call(self, run: Callable):
        """Runs ``run`` against this harness's session; a trap keeps nothing."""
        before = (dict(self.session.own), len(self.session.events))
        previous = imports.install(self.session)
        try:
            return run()
        except Trapped:
            self._restore(before)
            raise
        finally:
            imports.install(previous)

    def _result(self, run: Callable):
        """``_call`` for an export that returns a result: an error changes no state, and is
        raised as ``PluginError`` with its text."""
        before = dict(self.session.own)
        try:
            return self._call(run)
        except Failed as failed:
            self.session.own = before
            raise PluginError(failed.message) from None

    def _without_effects(self, run: Callable):
        """``_call``, dropping the call's state writes and events."""
        before = (dict(self.session.own), len(self.session.events))
        try:
            return self._call(run)
        finally:
            self._restore(before)

    def _restore(self, before: tuple[dict[str, str], int]) -> None:
        self.session.own = before[0]
        del self.session.events[before[1]:]


def _use(plugin: str, tool: str, arguments: dict | None, mutates: bool) -> ToolUse:
    return ToolUse(ToolCall(CALL_ID, tool, json.dumps({} if arguments is None else arguments)), plugin, mutates)
