"""Raises, loops and writes before failing, each from a tool; `echo` shows the next call
works; `read_meter` reads the host's meter. The status hook raises too, where no result
carries the error."""

from dataclasses import dataclass

import json

from agent_host_sdk import Plugin, PluginError, meter, state

plugin = Plugin("misbehave-py", "0.1.0")


@dataclass
class EchoArgs:
    text: str


@plugin.tool("echo", "Echoes its text back.")
def echo(ctx, args: EchoArgs) -> str:
    return args.text


@plugin.tool("fail", "Fails with a message for the model.")
def fail(ctx) -> str:
    raise PluginError("failed on purpose")


@plugin.tool("crash", "Raises an exception the plugin did not mean to.")
def crash(ctx) -> str:
    return {}["missing key"]


@plugin.tool("spin", "Loops forever.")
def spin(ctx) -> str:
    while True:
        pass


@plugin.tool("write_then_fail", "Writes state, then fails.")
def write_then_fail(ctx) -> str:
    state.set("written", True)
    raise PluginError("failed after writing")


@plugin.tool("read_meter", "Reads the host's meter of the running turn.")
def read_meter(ctx) -> str:
    reading = meter.read()
    return json.dumps({"turn_tokens": reading.turn_tokens, "turn_model_calls": reading.turn_model_calls,
                       "max_turn_tokens": reading.caps.max_turn_tokens})


@plugin.status
def status(ctx):
    raise RuntimeError("status broke on purpose")
