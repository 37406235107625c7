"""What the host answers a plugin's calls with: the meter's readings, the model's completion,
a process's output. The SDK's own dataclasses, the same in a component and in a unit test.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Caps:
    """The deployment's caps on one turn (`[agent]` in config.toml); None where it sets none."""

    max_iterations: int
    max_turn_tokens: int | None = None
    max_turn_secs: int | None = None
    max_continuations: int | None = None


@dataclass(frozen=True)
class MeterReading:
    """What the running turn has spent, and the caps on it (contract 0.2.6)."""

    turn_tokens: int
    turn_model_calls: int
    turn_ms: int
    turn_continuations: int
    caps: Caps


@dataclass(frozen=True)
class SessionReading:
    """What the whole session has spent, the running turn included (contract 0.2.7)."""

    tokens: int
    model_calls: int


@dataclass(frozen=True)
class ChatMessage:
    """One message sent to the model; role `system`, `user` or `assistant`."""

    role: str
    content: str


@dataclass(frozen=True)
class Completion:
    """The model's answer and what it cost, as the endpoint counted it."""

    text: str
    input_tokens: int
    output_tokens: int


@dataclass(frozen=True)
class RunRequest:
    """What to run in the host's sandbox, and how long to let it run."""

    command: str
    timeout_ms: int
    max_output_bytes: int


@dataclass(frozen=True)
class RunOutput:
    """How a run ended. ``status`` is None when the process was killed; ``timeout_cut_to_ms``
    is set when the host gave it less time than asked (what was left of the plugin's own)."""

    status: int | None
    stdout: str
    stderr: str
    timed_out: bool = False
    truncated: bool = False
    timeout_cut_to_ms: int | None = None
