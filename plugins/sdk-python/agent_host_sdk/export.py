"""The contract's exports for a declared plugin:
``Guest, Compactor, Viewer, Judge = export(plugin)`` (the host's build writes that line; a
plugin module only defines ``plugin``).

Errors are always carried as messages. Where an export returns a result (a tool, a command,
the configuration), whatever the plugin raises becomes the error text. Anywhere else the
traceback goes to the host's log under the plugin's name before the call fails, because
componentize-py turns any other exception into a trap with no message. The judge's hooks
never fail the call: what one raises is logged and becomes the verdict that decides nothing
(the turn ends as the model ended it, the review failed, nothing is queued).
"""

import traceback
from typing import Callable

from componentize_py_types import Err
from wit_world import exports
from wit_world.exports import compactor as _compactor
from wit_world.exports import judge as _judge
from wit_world.imports import types as _types

from . import view as _view
from .host import PluginError, log
from .plugin import Context, Plugin


def _message(error: BaseException) -> str:
    if isinstance(error, PluginError):
        return str(error)
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _as_result(plugin: Plugin, run: Callable):
    """Runs ``run``; any exception becomes ``Err(message)``, the contract's error."""
    try:
        return run()
    except Err:
        raise
    except Exception as error:
        if not isinstance(error, PluginError):
            log.error(f"{plugin.name}: {traceback.format_exc()}")
        raise Err(_message(error)) from None


def _logged(plugin: Plugin, export: str, run: Callable):
    """Runs ``run``; an exception is logged with its traceback, then fails the call."""
    try:
        return run()
    except Exception as error:
        log.error(f"{plugin.name}: `{export}` failed: {traceback.format_exc()}")
        raise Err(_message(error)) from None


def _context(plugin: Plugin, raw: "_types.CallContext") -> Context | None:
    """The typed context, or None (logged) when the configuration does not fit."""
    try:
        return plugin.context(raw)
    except Exception as error:
        log.error(f"{plugin.name}: {_message(error)}")
        return None


def _judged(plugin: Plugin, export: str, run: Callable, kinds: tuple, otherwise: Callable):
    """Runs a judge hook: its verdict when it is one of ``kinds``; else (it raised, or
    returned something that is no such verdict) the error is logged and the verdict is
    ``otherwise(message)``."""
    try:
        verdict = run()
    except Exception as error:
        log.error(f"{plugin.name}: `{export}` failed: {traceback.format_exc()}")
        return otherwise(_message(error))
    if isinstance(verdict, kinds):
        return verdict
    message = f"`{export}` returned {verdict!r}, which is not one of its verdicts"
    log.error(f"{plugin.name}: {message}")
    return otherwise(message)


_TURN_VERDICTS = (_judge.TurnVerdict_End, _judge.TurnVerdict_Continue, _judge.TurnVerdict_Stop)
_REVIEW_VERDICTS = (_judge.ReviewVerdict_Abstain, _judge.ReviewVerdict_Allow, _judge.ReviewVerdict_Deny,
                    _judge.ReviewVerdict_Error)


def export(plugin: Plugin):
    """The four classes componentize-py instantiates for the ``judging-plugin`` world."""

    hooks = plugin.hooks

    class Guest(exports.Guest):
        def manifest(self):
            return _logged(plugin, "manifest", plugin.manifest)

        def configure(self, config):
            return _as_result(plugin, lambda: plugin.configure_raw(config))

        def provide(self, ctx):
            context = _context(plugin, ctx)
            if context is None:
                return _types.Contribution(instructions=None, tools=[], messages=[])
            return _logged(plugin, "provide", lambda: plugin.provide_raw(context))

        def call_tool(self, ctx, call):
            return _as_result(plugin, lambda: plugin.call_tool_raw(plugin.context(ctx), call))

        def session_start(self, ctx):
            context = _context(plugin, ctx) if "session_start" in hooks else None
            return None if context is None else _logged(plugin, "session-start",
                                                        lambda: hooks["session_start"](context))

        def user_prompt_submit(self, ctx, prompt):
            context = _context(plugin, ctx) if "user_prompt_submit" in hooks else None
            outcome = None if context is None else _logged(plugin, "user-prompt-submit",
                                                           lambda: hooks["user_prompt_submit"](context, prompt))
            return outcome or _types.PromptOutcome(block=None, context=None)

        def pre_tool_use(self, ctx, call):
            nothing = _types.PreToolOutcome(decision=None, updated_arguments=None, context=None)
            if "pre_tool_use" not in hooks:
                return nothing
            try:
                context = plugin.context(ctx)
            except Exception as error:
                # A policy that cannot read its configuration refuses rather than waves through.
                why = f"{plugin.name} cannot read its configuration: {_message(error)}"
                return _types.PreToolOutcome(decision=_types.Decision_Deny(why), updated_arguments=None, context=None)
            return _logged(plugin, "pre-tool-use", lambda: hooks["pre_tool_use"](context, call)) or nothing

        def post_tool_use(self, ctx, call, outcome):
            context = _context(plugin, ctx) if "post_tool_use" in hooks else None
            replace = None if context is None else _logged(plugin, "post-tool-use",
                                                           lambda: hooks["post_tool_use"](context, call, outcome))
            return _types.PostToolOutcome(replace=replace)

        def stop(self, ctx, reply):
            context = _context(plugin, ctx) if "stop" in hooks else None
            message = None if context is None else _logged(plugin, "stop", lambda: hooks["stop"](context, reply))
            return _types.StopOutcome_Stop() if message is None else _types.StopOutcome_Continue(message)

        def command(self, ctx, name, args):
            return _as_result(plugin, lambda: plugin.command_raw(plugin.context(ctx), name, args))

        def status(self, ctx):
            context = _context(plugin, ctx) if "status" in hooks else None
            return None if context is None else _logged(plugin, "status", lambda: hooks["status"](context))

    class Compactor(exports.Compactor):
        """This SDK does not compact yet: a plugin that compacts is written in Rust."""

        def spec(self, config):
            return _compactor.CompactorSpec(hooks=_compactor.CompactionHooks(0), trigger_percent=None)

        def compact(self, ctx, history, budget):
            raise Err(f"the {plugin.name} plugin does not compact")

        def pre_compact(self, ctx, budget):
            return _compactor.PreCompactOutcome(veto=None, keep=[])

        def post_compact(self, ctx, done):
            return None

    class Viewer(exports.Viewer):
        def shows(self, config):
            return "view" in hooks

        def view(self, ctx):
            context = _context(plugin, ctx) if "view" in hooks else None
            if context is None:
                return []
            return _logged(plugin, "view", lambda: _view.widgets(hooks["view"](context)))

    class Judge(exports.Judge):
        """The ``judge`` export: ``spec`` names the hooks the plugin declares, and the host
        calls only those."""

        def spec(self, config):
            return _judge.JudgeSpec(turn_end="turn_end" in hooks, review="review" in hooks,
                                    queued="queued" in hooks)

        def turn_end(self, ctx, reply):
            end = _judge.TurnVerdict_End()
            context = _context(plugin, ctx) if "turn_end" in hooks else None
            if context is None:
                return end
            return _judged(plugin, "turn-end", lambda: _or(hooks["turn_end"](context, reply), end),
                           _TURN_VERDICTS, lambda _: end)

        def review(self, ctx, call, asked):
            if "review" not in hooks:
                return _judge.ReviewVerdict_Abstain()
            try:
                context = plugin.context(ctx)
            except Exception as error:
                # Neither a denial nor an approval: the operator decides.
                why = f"{plugin.name} cannot read its configuration: {_message(error)}"
                log.error(why)
                return _judge.ReviewVerdict_Error(why)
            return _judged(plugin, "review",
                           lambda: _or(hooks["review"](context, call, asked), _judge.ReviewVerdict_Abstain()),
                           _REVIEW_VERDICTS, _judge.ReviewVerdict_Error)

        def queued(self, ctx):
            context = _context(plugin, ctx) if "queued" in hooks else None
            if context is None:
                return None
            return _judged(plugin, "queued", lambda: hooks["queued"](context), (str, type(None)), lambda _: None)

    return Guest, Compactor, Viewer, Judge


def _or(verdict, default):
    """A hook's verdict, or ``default`` for None."""
    return default if verdict is None else verdict
