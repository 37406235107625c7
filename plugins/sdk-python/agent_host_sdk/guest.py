"""A declared plugin's answers to every export of the contract, in the SDK's own types and
under the contract's rules for errors. The component (``component.py``) converts the bindings'
values to these and back (``Answers``); a unit test's harness (``testing``) calls them as they are, so a
test runs the very code a component runs.

Errors are always carried as messages. Where an export returns a result (a tool, a command,
the configuration), whatever the plugin raises becomes the error text (``Failed``), and one it
did not mean (not a ``PluginError``) is logged with its traceback too. Anywhere else the
traceback goes to the log before the call traps (``Trapped``), because componentize-py turns
an exception there into a trap with no message; so does a hook that returns something that is
not its answer. The judge's hooks never fail the call: what one raises or returns amiss is
logged and becomes the verdict that decides nothing (the turn ends as the model ended it, the
review failed, nothing is queued).
"""

import traceback
from typing import Callable

from . import view as _view
from .contribution import Contribution
from .errors import PluginError, message_of
from .host import log
from .outcomes import Decision, PreToolOutcome, PromptOutcome
from .plugin import Context, Plugin
from .types import CallContext, Configured, Manifest, ToolCall, ToolResult, ToolUse
from .verdicts import JudgeSpec, ReviewVerdict, TurnVerdict, abstain, end_turn, review_error


class Failed(Exception):
    """The call returned the contract's error: ``message`` goes to the model or the operator."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class Trapped(Exception):
    """The call trapped: the host keeps none of its state writes or events, and answers as it
    does for a plugin that fails (``message`` is what the log says)."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class Answers:
    """What ``plugin`` answers each export."""

    def __init__(self, plugin: Plugin):
        self.plugin = plugin
        self.hooks = plugin.hooks

    # Helpers that apply the rules above.

    def _as_result(self, run: Callable):
        """Runs ``run``; any exception becomes ``Failed(message)``, the contract's error."""
        try:
            return run()
        except Exception as error:
            if not isinstance(error, PluginError):
                log.error(f"{self.plugin.name}: {traceback.format_exc()}")
            raise Failed(message_of(error)) from None

    def _logged(self, export: str, run: Callable, answers: tuple = ()):
        """Runs ``run``; an exception, or an answer that is not one of ``answers`` (when given),
        is logged and traps the call."""
        try:
            answer = run()
        except Exception as error:
            log.error(f"{self.plugin.name}: `{export}` failed: {traceback.format_exc()}")
            raise Trapped(message_of(error)) from None
        if answers and not isinstance(answer, answers):
            message = f"`{export}` returned {answer!r}, which is not one of its answers"
            log.error(f"{self.plugin.name}: {message}")
            raise Trapped(message)
        return answer

    def _context(self, raw: CallContext) -> Context | None:
        """The typed context, or None (logged) when the configuration does not fit."""
        try:
            return self.plugin.context(raw)
        except Exception as error:
            log.error(f"{self.plugin.name}: {message_of(error)}")
            return None

    def _hooked(self, hook: str, raw: CallContext) -> Context | None:
        """The context for ``hook``, or None when the plugin has no such hook or its
        configuration does not fit."""
        return self._context(raw) if hook in self.hooks else None

    def _judged(self, export: str, run: Callable, answers: tuple, otherwise: Callable):
        """Runs a judge hook: its verdict when it is one of ``answers``; else (it raised, or
        returned something that is no such verdict) the error is logged and the verdict is
        ``otherwise(message)``."""
        try:
            verdict = run()
        except Exception as error:
            log.error(f"{self.plugin.name}: `{export}` failed: {traceback.format_exc()}")
            return otherwise(message_of(error))
        if isinstance(verdict, answers):
            return verdict
        message = f"`{export}` returned {verdict!r}, which is not one of its verdicts"
        log.error(f"{self.plugin.name}: {message}")
        return otherwise(message)

    # The `guest` interface.

    def manifest(self) -> Manifest:
        return self._logged("manifest", self.plugin.manifest)

    def configure(self, config: str) -> Configured:
        return self._as_result(lambda: self.plugin.configure_raw(config))

    def provide(self, raw: CallContext) -> Contribution:
        ctx = self._context(raw)
        if ctx is None:
            return Contribution()
        return self._logged("provide", lambda: self.plugin.provide_raw(ctx), (Contribution,))

    def call_tool(self, raw: CallContext, call: ToolCall) -> str:
        return self._as_result(lambda: self.plugin.call_tool_raw(self.plugin.context(raw), call))

    def session_start(self, raw: CallContext) -> str | None:
        ctx = self._hooked("session_start", raw)
        if ctx is None:
            return None
        return self._logged("session-start", lambda: self.hooks["session_start"](ctx), (str, type(None)))

    def user_prompt_submit(self, raw: CallContext, prompt: str) -> PromptOutcome:
        ctx = self._hooked("user_prompt_submit", raw)
        if ctx is None:
            return PromptOutcome()
        outcome = self._logged("user-prompt-submit", lambda: self.hooks["user_prompt_submit"](ctx, prompt),
                               (PromptOutcome, type(None)))
        return outcome or PromptOutcome()

    def pre_tool_use(self, raw: CallContext, call: ToolUse) -> PreToolOutcome:
        if "pre_tool_use" not in self.hooks:
            return PreToolOutcome()
        try:
            ctx = self.plugin.context(raw)
        except Exception as error:
            # A policy that cannot read its configuration refuses rather than waves through.
            why = f"{self.plugin.name} cannot read its configuration: {message_of(error)}"
            return PreToolOutcome(Decision("deny", why))
        outcome = self._logged("pre-tool-use", lambda: self.hooks["pre_tool_use"](ctx, call),
                               (PreToolOutcome, type(None)))
        return outcome or PreToolOutcome()

    def post_tool_use(self, raw: CallContext, call: ToolUse, outcome: ToolResult) -> ToolResult | None:
        """The replacement result, or None to keep the tool's own."""
        ctx = self._hooked("post_tool_use", raw)
        if ctx is None:
            return None
        return self._logged("post-tool-use", lambda: self.hooks["post_tool_use"](ctx, call, outcome),
                            (ToolResult, type(None)))

    def stop(self, raw: CallContext, reply: str) -> str | None:
        """A message to continue the turn with, or None to let it end."""
        ctx = self._hooked("stop", raw)
        if ctx is None:
            return None
        return self._logged("stop", lambda: self.hooks["stop"](ctx, reply), (str, type(None)))

    def command(self, raw: CallContext, name: str, args: str) -> str:
        return self._as_result(lambda: self.plugin.command_raw(self.plugin.context(raw), name, args))

    def status(self, raw: CallContext) -> str | None:
        ctx = self._hooked("status", raw)
        if ctx is None:
            return None
        return self._logged("status", lambda: self.hooks["status"](ctx), (str, type(None)))

    # The `viewer` interface.

    def shows(self, config: str) -> bool:
        return "view" in self.hooks

    def view(self, raw: CallContext) -> list[_view.Widget]:
        ctx = self._hooked("view", raw)
        if ctx is None:
            return []
        return self._logged("view", lambda: _view.widgets(self.hooks["view"](ctx)))

    # The `judge` interface: ``judge_spec`` names the hooks the plugin declares, and the host
    # calls only those.

    def judge_spec(self, config: str) -> JudgeSpec:
        return JudgeSpec(turn_end="turn_end" in self.hooks, review="review" in self.hooks,
                         queued="queued" in self.hooks)

    def turn_end(self, raw: CallContext, reply: str) -> TurnVerdict:
        ctx = self._hooked("turn_end", raw)
        if ctx is None:
            return end_turn()
        return self._judged("turn-end", lambda: _or(self.hooks["turn_end"](ctx, reply), end_turn()),
                            (TurnVerdict,), lambda _: end_turn())

    def review(self, raw: CallContext, call: ToolUse, asked: str) -> ReviewVerdict:
        if "review" not in self.hooks:
            return abstain()
        try:
            ctx = self.plugin.context(raw)
        except Exception as error:
            # Neither a denial nor an approval: the operator decides.
            why = f"{self.plugin.name} cannot read its configuration: {message_of(error)}"
            log.error(why)
            return review_error(why)
        return self._judged("review", lambda: _or(self.hooks["review"](ctx, call, asked), abstain()),
                            (ReviewVerdict,), review_error)

    def queued(self, raw: CallContext) -> str | None:
        ctx = self._hooked("queued", raw)
        if ctx is None:
            return None
        return self._judged("queued", lambda: self.hooks["queued"](ctx), (str, type(None)), lambda _: None)


def _or(verdict, default):
    """A hook's verdict, or ``default`` for None."""
    return default if verdict is None else verdict
