"""`{{name}}`: one tool, `greet`, whose greeting comes from the plugin's config, and a
counter of greetings kept in the session's state bag."""

from dataclasses import dataclass
from typing import Annotated

from agent_host_sdk import Plugin, PluginError, events, state


@dataclass
class Config:
    """The `[plugin.config]` table, with defaults."""

    greeting: str = "Hello"


# Its version is pyproject.toml's `[project] version`.
plugin = Plugin("{{name}}", config=Config)


@plugin.configure
def check(config: Config):
    if not config.greeting.strip():
        raise PluginError("`greeting` must not be blank")
    return []


@dataclass
class GreetArgs:
    """The arguments of `greet`; the model sees this dataclass's JSON Schema."""

    name: Annotated[str, "The name to greet."]


@plugin.tool("greet", "Greets someone by name.")
def greet(ctx, args: GreetArgs) -> str:
    count = state.get("count", 0)
    state.set("count", count + 1)
    events.emit("greeted", {"name": args.name}, f"greeted {args.name}")
    return f"{ctx.config.greeting}, {args.name}!"


@plugin.provide
def provide(ctx, contribution):
    return contribution.instructions(
        "When the user introduces themselves, greet them with the `greet` tool."
    ).reusable()


@plugin.command("greetings", "/greetings", "Shows how many greetings were sent")
def greetings(ctx, args: str) -> str:
    return f"{state.get('count', 0)} greetings so far"
