"""What the `judge` hooks (contract 0.2.7) answer: how a turn ends (``on_turn_end``) and what
becomes of a call the permission hooks would ask the operator about (``on_review``). Each
type with the functions that build it.
"""

import enum
from dataclasses import dataclass


class StopReason(enum.Enum):
    """Why a plugin ends a turn."""

    NEED_INPUT = "need-input"  # the work needs something only the operator can give
    BLOCKED = "blocked"  # the work cannot go on
    TOKEN_BUDGET = "token-budget"  # a budget of the plugin's own is spent
    TIME_BUDGET = "time-budget"  # a time limit of the plugin's own is reached


NEED_INPUT = StopReason.NEED_INPUT
BLOCKED = StopReason.BLOCKED
TOKEN_BUDGET = StopReason.TOKEN_BUDGET
TIME_BUDGET = StopReason.TIME_BUDGET


@dataclass(frozen=True)
class TurnVerdict:
    """`end` (as the model ended it), `continue` with ``text`` for the model, or `stop` with
    ``reason`` and ``text`` for the operator."""

    kind: str
    text: str | None = None
    reason: StopReason | None = None


def end_turn() -> TurnVerdict:
    """No opinion: the turn ends as the model ended it (what a hook returning None says)."""
    return TurnVerdict("end")


def continue_turn(text: str) -> TurnVerdict:
    """Sends the model on with ``text`` as a user message (within the turn's caps)."""
    return TurnVerdict("continue", text)


def stop_turn(reason: StopReason, message: str) -> TurnVerdict:
    """Ends the turn with ``reason`` (``NEED_INPUT``, ``BLOCKED``, ``TOKEN_BUDGET``,
    ``TIME_BUDGET``) and a line for the operator; it wins over every continuation."""
    return TurnVerdict("stop", message, reason)


@dataclass(frozen=True)
class ReviewVerdict:
    """`abstain`, `allow`, `deny` (``reason`` goes to the model) or `error` (the review
    failed, ``reason`` says how)."""

    kind: str
    reason: str | None = None


def abstain() -> ReviewVerdict:
    """Not this reviewer's call: the operator is asked (what a hook returning None says)."""
    return ReviewVerdict("abstain")


def approve() -> ReviewVerdict:
    """The reviewed call runs without asking the operator."""
    return ReviewVerdict("allow")


def refuse(why: str) -> ReviewVerdict:
    """The reviewed call is refused; ``why`` goes back to the model as the tool's error."""
    return ReviewVerdict("deny", why)


def review_error(why: str) -> ReviewVerdict:
    """The review failed (``why`` says how): neither an approval nor a denial, the operator
    is asked (or ``agent.on_ask`` decides)."""
    return ReviewVerdict("error", why)


@dataclass(frozen=True)
class JudgeSpec:
    """Which judge hooks a plugin implements; the host calls only those."""

    turn_end: bool
    review: bool
    queued: bool
