"""What ``provide`` adds before a model call, built by the plugin's ``provide`` hook."""

from .host import reusable
from .types import InjectedMessage, ToolSpec

_ROLES = ("system", "user")


class Contribution:
    """Instructions for the system prompt (``text``), the tools whose spec depends on state
    (``tools``, listed by the SDK before the hook runs) and messages for this model call only
    (``messages``)."""

    def __init__(self, tools: list[ToolSpec] | None = None):
        self.text: str | None = None
        self.tools: list[ToolSpec] = list(tools or [])
        self.messages: list[InjectedMessage] = []

    def instructions(self, text: str) -> "Contribution":
        """Adds text to the system prompt."""
        self.text = text
        return self

    def inject(self, content: str, role: str = "system") -> "Contribution":
        """Injects a message (role `system` or `user`) into this model call only."""
        if role not in _ROLES:
            raise ValueError(f"an injected message is `system` or `user`, not `{role}`")
        self.messages.append(InjectedMessage(role, content))
        return self

    def reusable(self) -> "Contribution":
        """Says this contribution depends only on the configuration and the state read, so
        the host reuses it until that state changes. Not for one that reads the session id,
        the clock or files."""
        reusable()
        return self

    def __repr__(self) -> str:
        return f"Contribution(text={self.text!r}, tools={self.tools!r}, messages={self.messages!r})"
