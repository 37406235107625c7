"""What a configuration requires of the host, and what the guest hooks answer: a prompt
blocked or given context, a tool call allowed, put to the operator or refused. Each type with
the functions that build it; the SDK's own values, converted to the contract's in a component.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Requirement:
    """What a configuration needs of the host: `reads-state` (of ``namespace``),
    `runs-processes` or `network`."""

    kind: str
    namespace: str | None = None


def reads_state(namespace: str) -> Requirement:
    """The configuration reads another plugin's namespace (a `read_state` grant)."""
    return Requirement("reads-state", namespace)


RUNS_PROCESSES = Requirement("runs-processes")
NETWORK = Requirement("network")


@dataclass(frozen=True)
class PromptOutcome:
    """What `on_user_prompt` says of a prompt: block it (with the reason), or add context."""

    block: str | None = None
    context: str | None = None


def block(reason: str) -> PromptOutcome:
    return PromptOutcome(block=reason)


def add_context(text: str) -> PromptOutcome:
    return PromptOutcome(context=text)


@dataclass(frozen=True)
class Decision:
    """`allow`, `ask` or `deny` a tool call; `reason` says why (to the operator, or to the model
    for a denial)."""

    kind: str
    reason: str | None = None


@dataclass(frozen=True)
class PreToolOutcome:
    """What `on_pre_tool_use` says of a call: a decision (None: no opinion), arguments to run
    it with instead (JSON text), and context for the model."""

    decision: Decision | None = None
    updated_arguments: str | None = None
    context: str | None = None


def allow() -> PreToolOutcome:
    return PreToolOutcome(Decision("allow"))


def ask(why: str) -> PreToolOutcome:
    return PreToolOutcome(Decision("ask", why))


def deny(why: str) -> PreToolOutcome:
    return PreToolOutcome(Decision("deny", why))
