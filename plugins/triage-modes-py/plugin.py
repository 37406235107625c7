"""The `triage-modes` plugin in Python: the same workflow as plugins/triage-modes (Rust).
A session moves through `triage` → `research` → `review`, forward only, through the
`advance_stage` tool; `review` opens only when the `todo` list has no open items (read
through a `read_state = ["todo"]` grant); every stage has its own instructions.
"""

from dataclasses import dataclass
from typing import Annotated

from agent_host_sdk import Choice, Plugin, PluginError, events, log, state
from stages import STAGES, names, position

# Its version is pyproject.toml's.
plugin = Plugin("triage-modes")


@dataclass
class AdvanceArgs:
    to: Annotated[str, "A later stage: `research` or `review`."]


def current_stage() -> int:
    """The index of the session's stage; a session that never advanced is in `triage`."""
    name = state.get("mode")
    if name is None:
        return 0
    index = position(name)
    if index is None:
        raise PluginError(f"the stored stage `{name}` is not a known stage")
    return index


@plugin.tool("advance_stage", "Moves the triage workflow forward to a later stage.")
def advance(ctx, args: AdvanceArgs) -> str:
    target = position(args.to)
    if target is None:
        raise PluginError(f"unknown stage `{args.to}`; the stages are {names()}")
    current = current_stage()
    origin = STAGES[current].name
    if target <= current:
        raise PluginError(f"stages only move forward: you are in `{origin}`, so `{args.to}` is behind you")
    if STAGES[target].name == "review":
        review_may_open()
    state.set("mode", args.to)
    events.emit("mode-changed", {"from": origin, "to": args.to, "by": "model"}, f"mode → {args.to}")
    return f"Stage is now {args.to}."


def review_may_open() -> None:
    """Raises, in words the model can act on, unless the `todo` plugin has no open items."""
    items = state.read("todo", "items", default=[])
    still_open = [f"- {item['title']}" for item in items if not item.get("isComplete", False)]
    if still_open:
        raise PluginError("review stays closed while todos are open. Finish or remove these first:\n"
                          + "\n".join(still_open))


@plugin.provide
def provide(ctx, contribution):
    try:
        current = current_stage()
    except PluginError as error:
        log.error(str(error))
        current = 0
    stage = STAGES[current]
    following = f" The next is `{STAGES[current + 1].name}`." if current + 1 < len(STAGES) else ""
    # Depends on the stored stage only.
    return contribution.instructions(
        f"## Triage workflow\n\nYou are in the `{stage.name}` stage of triage → research → review. "
        f"Stages only move forward.{following}\n\n{stage.instructions}"
    ).reusable()


def stage_shown() -> str | None:
    """The session's stage by name, or None when what is stored is no stage."""
    try:
        return STAGES[current_stage()].name
    except PluginError:
        return None


@plugin.status
def status(ctx):
    return stage_shown()


@plugin.command("stage", "/stage", "Shows the current triage stage")
def stage(ctx, args: str) -> str:
    return f"stage: {STAGES[current_stage()].name}"


@plugin.view
def view(ctx):
    # No command: only the model moves the stage, through the checks of `advance_stage`. A
    # stage that cannot be read shows none, rather than no view at all.
    choice = Choice("stage", "Stage", current=stage_shown())
    for each in STAGES:
        choice.option(each.name, each.label, each.summary)
    return [choice.category("mode")]
