"""Judges with the Python SDK. At a turn's end: a reply that starts with "Draft" is sent on
once with a request to check it, one that starts with "Stuck" stops the turn for the
operator, any other ends as the model ended it. Of a `note` call the permission policy asks
about: one that deletes is refused, one that says "crash" makes the review raise (a failed
review, for the operator), any other is approved. `/plan TEXT` queues a turn that works on
the plan."""

import json
from dataclasses import dataclass

from agent_host_sdk import NEED_INPUT, Plugin, approve, continue_turn, refuse, state, stop_turn

plugin = Plugin("judge-py", "0.1.0")


@dataclass
class NoteArgs:
    text: str


@plugin.tool("note", "Keeps a note.", mutating=True)
def note(ctx, args: NoteArgs) -> str:
    state.set("notes", state.get("notes", []) + [args.text])
    return f"noted: {args.text}"


@plugin.on_turn_end
def turn_end(ctx, reply):
    if reply.startswith("Draft"):
        return continue_turn(f"Check the draft once more: {reply}")
    if reply.startswith("Stuck"):
        return stop_turn(NEED_INPUT, f"judge-py needs the operator: {reply}")
    return None


@plugin.on_review
def review(ctx, call, asked):
    text = json.loads(call.call.arguments)["text"]
    if text == "crash":
        raise RuntimeError("the review broke on purpose")
    if "delete" in text:
        return refuse(f"judge-py refuses deleting ({asked})")
    return approve()


@plugin.command("plan", "/plan TEXT", "Queues a turn that works on the plan.")
def plan(ctx, args):
    state.set("plan", args)
    return f"planned: {args}"


@plugin.on_queued
def queued(ctx):
    plan = state.get("plan")
    if plan is None:
        return None
    state.remove("plan")
    return f"Work on the plan: {plan}"
