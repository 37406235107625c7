"""Native stand-ins for the host, for plugins' unit tests (plain ``python3``, no component):
``Harness`` configures a plugin and makes its calls as the host would, in a session of its
own, and shows what they wrote, emitted and logged.

    from agent_host_sdk.testing import Harness

    harness = Harness(plugin, {"greeting": "Hi"})
    assert harness.tool("greet", {"name": "Ada"}) == "Hi, Ada!"
    assert harness.stored("count") == 1
    assert [event.kind for event in harness.take_events()] == ["greeted"]
"""

from ..guest import Trapped
from .harness import Harness
from .session import Emitted

__all__ = ["Emitted", "Harness", "Trapped"]
