"""The SDK's values to and from the classes componentize-py generates for the contract, at
the component's edge (``component.py``)."""

from wit_world.exports import judge as _judge
from wit_world.exports import viewer as _viewer
from wit_world.imports import types as _types

from . import view
from .contribution import Contribution
from .outcomes import PreToolOutcome, PromptOutcome, Requirement
from .types import CallContext, Configured, Manifest, ToolCall, ToolResult, ToolUse
from .verdicts import JudgeSpec, ReviewVerdict, TurnVerdict

# In: what the host sends.


def call_context(raw) -> CallContext:
    return CallContext(raw.session_id, raw.config, raw.model_calls, raw.turn_iteration)


def tool_call(raw) -> ToolCall:
    return ToolCall(raw.id, raw.name, raw.arguments)


def tool_use(raw) -> ToolUse:
    return ToolUse(tool_call(raw.call), raw.plugin, raw.mutates)


def tool_result(raw) -> ToolResult:
    return ToolResult(raw.ok, raw.output)


# Out: what the plugin answers.


def manifest(value: Manifest):
    flags = _types.Capabilities(0)
    for flag in type(value.capabilities):
        if flag in value.capabilities:
            flags |= getattr(_types.Capabilities, flag.name)
    commands = [_types.CommandSpec(name=c.name, description=c.description, usage=c.usage) for c in value.commands]
    return _types.PluginManifest(name=value.name, version=value.version, capabilities=flags, commands=commands)


def requirement(value: Requirement):
    if value.kind == "reads-state":
        return _types.Requirement_ReadsState(value.namespace)
    if value.kind == "runs-processes":
        return _types.Requirement_RunsProcesses()
    if value.kind == "network":
        return _types.Requirement_Network()
    raise ValueError(f"`{value.kind}` is not a requirement")


def configured(value: Configured):
    return _types.Configured(config=value.config, requires=[requirement(each) for each in value.requires])


def tool_spec(value):
    return _types.ToolSpec(name=value.name, description=value.description, parameters=value.parameters,
                           mutates=value.mutates)


def contribution(value: Contribution):
    messages = [_types.InjectedMessage(role=getattr(_types.Role, message.role.upper()), content=message.content)
                for message in value.messages]
    return _types.Contribution(instructions=value.text, tools=[tool_spec(tool) for tool in value.tools],
                               messages=messages)


def prompt_outcome(value: PromptOutcome):
    return _types.PromptOutcome(block=value.block, context=value.context)


def pre_tool_outcome(value: PreToolOutcome):
    decision = None
    if value.decision is not None:
        kind, reason = value.decision.kind, value.decision.reason
        decisions = {"allow": lambda: _types.Decision_Allow(), "ask": lambda: _types.Decision_Ask(reason),
                     "deny": lambda: _types.Decision_Deny(reason)}
        decision = decisions[kind]()
    return _types.PreToolOutcome(decision=decision, updated_arguments=value.updated_arguments,
                                 context=value.context)


def post_tool_outcome(replace: ToolResult | None):
    return _types.PostToolOutcome(replace=None if replace is None else _types.ToolResult(ok=replace.ok,
                                                                                          output=replace.output))


def stop_outcome(message: str | None):
    return _types.StopOutcome_Stop() if message is None else _types.StopOutcome_Continue(message)


def judge_spec(value: JudgeSpec):
    return _judge.JudgeSpec(turn_end=value.turn_end, review=value.review, queued=value.queued)


def turn_verdict(value: TurnVerdict):
    if value.kind == "continue":
        return _judge.TurnVerdict_Continue(value.text)
    if value.kind == "stop":
        reason = getattr(_judge.StopReason, value.reason.name)
        return _judge.TurnVerdict_Stop(_judge.StopVerdict(reason=reason, message=value.text))
    return _judge.TurnVerdict_End()


def review_verdict(value: ReviewVerdict):
    if value.kind == "allow":
        return _judge.ReviewVerdict_Allow()
    if value.kind == "deny":
        return _judge.ReviewVerdict_Deny(value.reason)
    if value.kind == "error":
        return _judge.ReviewVerdict_Error(value.reason)
    return _judge.ReviewVerdict_Abstain()


def widget(value: view.Widget):
    if isinstance(value, view.ChoiceWidget):
        options = [_viewer.ChoiceOption(value=o.value, label=o.label, description=o.description)
                   for o in value.options]
        return _viewer.Widget_Choice(_viewer.Choice(id=value.id, label=value.label, current=value.current,
                                                    options=options, command=value.command,
                                                    category=value.category))
    if isinstance(value, view.ChecklistWidget):
        entries = [_viewer.ChecklistEntry(title=e.title, state=getattr(_viewer.EntryState, e.state.name),
                                          active_form=e.active_form, detail=e.detail) for e in value.entries]
        return _viewer.Widget_Checklist(_viewer.Checklist(id=value.id, label=value.label, entries=entries))
    return _viewer.Widget_Text(_viewer.TextSection(id=value.id, label=value.label, markdown=value.markdown))
