"""The component's edge: what each export hands componentize-py, natively against stand-ins
for the bindings (wit_stub.py). What the answers are is the harness's to test (test_judge.py,
test_harness.py); here, that they reach the contract's types, and that an error becomes `Err`:
`python3 -m unittest discover -s plugins/sdk-python/tests`."""

import unittest
from dataclasses import dataclass

import wit_stub

component = wit_stub.install()
import agent_host_sdk as sdk  # noqa: E402  (after the stand-ins: the SDK imports them through component)
from agent_host_sdk import imports  # noqa: E402
from componentize_py_types import Err  # noqa: E402  (the stand-in, once installed)
from wit_world.exports import judge as _judge  # noqa: E402
from wit_world.exports import viewer as _viewer  # noqa: E402
from wit_world.imports import types as _types  # noqa: E402


@dataclass
class Args:
    text: str


def exported(plugin):
    """An instance of each class `export` makes, as componentize-py would instantiate them."""
    return [made() for made in component.export(plugin)]


def context() -> "_types.CallContext":
    return _types.CallContext(session_id="s1", config="{}", model_calls=2, turn_iteration=1)


def tool_use(name: str) -> "_types.ToolUse":
    return _types.ToolUse(call=_types.ToolCall(id="c1", name=name, arguments="{}"), plugin="p", mutates=True)


class ComponentTests(unittest.TestCase):
    def setUp(self):
        wit_stub.LOGGED.clear()
        # `export` sends host calls to the bindings; the other tests' harnesses expect none.
        self.addCleanup(imports.install, imports.install(None))

    def test_the_judges_verdicts_reach_the_contracts_types(self):
        plugin = sdk.Plugin("p", "0.1.0")

        @plugin.on_turn_end
        def turn_end(ctx, reply):
            return sdk.stop_turn(sdk.BLOCKED, "stuck") if reply == "stuck" else sdk.continue_turn("more")

        @plugin.on_review
        def review(ctx, call, asked):
            verdicts = {"rm": sdk.refuse("no"), "make": sdk.approve(), "odd": sdk.review_error("unsure")}
            return verdicts.get(call.call.name)

        judge = exported(plugin)[3]
        self.assertEqual(judge.spec("{}"), _judge.JudgeSpec(turn_end=True, review=True, queued=False))
        self.assertEqual(judge.turn_end(context(), "go"), _judge.TurnVerdict_Continue("more"))
        self.assertEqual(judge.turn_end(context(), "stuck"), _judge.TurnVerdict_Stop(
            _judge.StopVerdict(reason=_judge.StopReason.BLOCKED, message="stuck")))
        self.assertEqual(judge.review(context(), tool_use("rm"), "asks"), _judge.ReviewVerdict_Deny("no"))
        self.assertEqual(judge.review(context(), tool_use("make"), "asks"), _judge.ReviewVerdict_Allow())
        self.assertEqual(judge.review(context(), tool_use("odd"), "asks"), _judge.ReviewVerdict_Error("unsure"))
        self.assertEqual(judge.review(context(), tool_use("ls"), "asks"), _judge.ReviewVerdict_Abstain())

    def test_the_guests_answers_reach_the_contracts_types(self):
        plugin = sdk.Plugin("p", "0.1.0")

        @plugin.configure
        def configure(config):
            return [sdk.reads_state("todo"), sdk.NETWORK]

        @plugin.provide
        def provide(ctx, contribution):
            return contribution.instructions("Be brief.").inject("Hi", role="user")

        @plugin.on_pre_tool_use
        def pre(ctx, use):
            return sdk.deny(f"no {use.call.name}")

        @plugin.on_stop
        def stop(ctx, reply):
            return "go on"

        guest = exported(plugin)[0]
        self.assertEqual(guest.configure("{}"), _types.Configured(
            config="{}", requires=[_types.Requirement_ReadsState("todo"), _types.Requirement_Network()]))
        self.assertEqual(guest.provide(context()), _types.Contribution(
            instructions="Be brief.", tools=[],
            messages=[_types.InjectedMessage(role=_types.Role.USER, content="Hi")]))
        self.assertEqual(guest.pre_tool_use(context(), tool_use("rm")), _types.PreToolOutcome(
            decision=_types.Decision_Deny("no rm"), updated_arguments=None, context=None))
        self.assertEqual(guest.post_tool_use(context(), tool_use("rm"), _types.ToolResult(ok=True, output="x")),
                         _types.PostToolOutcome(replace=None))
        self.assertEqual(guest.stop(context(), "halfway"), _types.StopOutcome_Continue("go on"))

    def test_an_error_is_the_contracts_err_with_its_message(self):
        plugin = sdk.Plugin("p", "0.1.0")

        @plugin.tool("fail", "Fails.")
        def fail(ctx, args: Args) -> str:
            raise sdk.PluginError(f"failed on {args.text}")

        @plugin.status
        def status(ctx):
            raise RuntimeError("status broke")

        guest = exported(plugin)[0]
        with self.assertRaises(Err) as failed:
            guest.call_tool(context(), _types.ToolCall(id="c1", name="fail", arguments='{"text": "purpose"}'))
        self.assertEqual(failed.exception.value, "failed on purpose")
        with self.assertRaises(Err) as trapped:
            guest.status(context())
        self.assertEqual(trapped.exception.value, "RuntimeError: status broke")
        # Logged through the contract's log import, at its error level.
        self.assertEqual(wit_stub.LOGGED[0][0], "Level.ERROR")
        self.assertIn("p: `status` failed", wit_stub.LOGGED[0][1])

    def test_a_view_reaches_the_contracts_widgets(self):
        plugin = sdk.Plugin("p", "0.1.0")

        @plugin.view
        def view(ctx):
            return [sdk.Choice("mode", "Mode", "plan").option("plan", "Plan").command("/mode"),
                    sdk.Checklist("plan", "Plan").entry("Test", sdk.IN_PROGRESS, active_form="Testing"),
                    sdk.Text("notes", "Notes", "*none*")]

        viewer = exported(plugin)[2]
        self.assertTrue(viewer.shows("{}"))
        self.assertEqual(viewer.view(context()), [
            _viewer.Widget_Choice(_viewer.Choice(
                id="mode", label="Mode", current="plan", category=None, command="/mode",
                options=[_viewer.ChoiceOption(value="plan", label="Plan", description=None)])),
            _viewer.Widget_Checklist(_viewer.Checklist(id="plan", label="Plan", entries=[_viewer.ChecklistEntry(
                title="Test", state=_viewer.EntryState.IN_PROGRESS, active_form="Testing", detail=None)])),
            _viewer.Widget_Text(_viewer.TextSection(id="notes", label="Notes", markdown="*none*")),
        ])


if __name__ == "__main__":
    unittest.main()
