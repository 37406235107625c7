"""Raises, loops and writes before failing, each from a tool; `echo` shows the next call
works. The status hook raises too, where no result carries the error."""

from dataclasses import dataclass

from agent_host_sdk import Plugin, PluginError, state

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


@plugin.status
def status(ctx):
    raise RuntimeError("status broke on purpose")
