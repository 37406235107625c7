"""The harness applies the host's rules for what a call keeps, and stands in for every host
call: `python3 -m unittest discover -s plugins/sdk-python/tests`."""

import pathlib
import sys
import tempfile
import textwrap
import unittest
from dataclasses import dataclass

sys.path.insert(0, str(pathlib.Path(__file__).parent.parent))
import agent_host_sdk as sdk  # noqa: E402  (from this checkout's SDK)
from agent_host_sdk import events, meter, model, process, state  # noqa: E402
from agent_host_sdk.testing import Emitted, Harness, Trapped  # noqa: E402


@dataclass
class NoteArgs:
    text: str


def noter() -> sdk.Plugin:
    """Notes texts: `note` writes and emits, then fails on `fail`; `status` and `view` write
    and emit too, which the host drops."""
    plugin = sdk.Plugin("noter", "0.1.0")

    @plugin.tool("note", "Notes a text.", mutating=True)
    def note(ctx, args: NoteArgs) -> str:
        state.set("notes", state.get("notes", []) + [args.text])
        events.emit("noted", {"text": args.text})
        if args.text == "fail":
            raise sdk.PluginError("not that one")
        if args.text == "crash":
            return {}["crash"]
        return f"noted {args.text}"

    @plugin.command("forget", "/forget", "Forgets every note")
    def forget(ctx, args):
        state.remove("notes")
        return "forgotten"

    @plugin.status
    def status(ctx):
        state.set("looked", True)
        events.emit("looked", {})
        return f"{len(state.get('notes', []))} notes"

    @plugin.view
    def view(ctx):
        state.set("looked", True)
        events.emit("looked", {})
        checklist = sdk.Checklist("notes", "Notes")
        for text in state.get("notes", []):
            checklist.entry(text, sdk.COMPLETED)
        return [checklist]

    @plugin.on_session_start
    def start(ctx):
        state.set("started", True)
        raise RuntimeError("no start")

    return plugin


class RulesTests(unittest.TestCase):
    def test_a_tool_call_keeps_its_writes_and_events(self):
        harness = Harness(noter())
        self.assertEqual(harness.tool("note", {"text": "a"}), "noted a")
        self.assertEqual(harness.stored("notes"), ["a"])
        self.assertEqual(harness.take_events(), [Emitted("noted", {"text": "a"}, None)])
        self.assertEqual(harness.take_events(), [], "taken once")

    def test_a_failed_tool_call_changes_no_state_but_its_events_stand(self):
        harness = Harness(noter())
        harness.tool("note", {"text": "a"})
        harness.take_events()
        with self.assertRaises(sdk.PluginError) as failed:
            harness.tool("note", {"text": "fail"})
        self.assertEqual(str(failed.exception), "not that one")
        self.assertEqual(harness.stored("notes"), ["a"])
        self.assertEqual(harness.take_events(), [Emitted("noted", {"text": "fail"}, None)])

    def test_an_error_the_plugin_did_not_mean_reads_as_its_type_and_is_logged(self):
        harness = Harness(noter())
        with self.assertRaises(sdk.PluginError) as failed:
            harness.tool("note", {"text": "crash"})
        self.assertEqual(str(failed.exception), "KeyError: 'crash'")
        self.assertIn("Traceback", harness.logs[0][1])
        self.assertIsNone(harness.stored("notes"))

    def test_arguments_that_do_not_fit_are_an_error_naming_the_field(self):
        with self.assertRaises(sdk.PluginError) as failed:
            Harness(noter()).tool("note", {"txt": "a"})
        self.assertEqual(str(failed.exception), "invalid arguments for `note`: unknown field `txt`, expected `text`")

    def test_status_and_view_change_nothing(self):
        harness = Harness(noter())
        harness.tool("note", {"text": "a"})
        harness.take_events()
        self.assertEqual(harness.status(), "1 notes")
        self.assertEqual(harness.view(), [sdk.ChecklistWidget("notes", "Notes",
                                                              [sdk.ChecklistEntry("a", sdk.COMPLETED)])])
        self.assertIsNone(harness.stored("looked"))
        self.assertEqual(harness.take_events(), [])

    def test_a_call_that_traps_keeps_nothing(self):
        harness = Harness(noter())
        with self.assertRaises(Trapped) as trapped:
            harness.session_start()
        self.assertEqual(trapped.exception.message, "RuntimeError: no start")
        self.assertIsNone(harness.stored("started"))
        self.assertTrue(harness.logs[0][1].startswith("noter: `session-start` failed"), harness.logs)

    def test_a_command_answers_and_an_unknown_one_is_an_error(self):
        harness = Harness(noter())
        harness.store("notes", ["old"])
        self.assertEqual(harness.command("forget"), "forgotten")
        self.assertIsNone(harness.stored("notes"))
        with self.assertRaises(sdk.PluginError) as unknown:
            harness.command("remember")
        self.assertEqual(str(unknown.exception), "the noter plugin has no command named `/remember`")

    def test_declared_tools_come_first_and_a_plugin_without_provide_is_reusable(self):
        harness = Harness(noter())
        self.assertEqual([tool.name for tool in harness.declared], ["note"])
        self.assertTrue(harness.declared[0].mutates)
        self.assertEqual([tool.name for tool in harness.provide().tools], ["note"])
        self.assertTrue(harness.take_reusable())
        self.assertFalse(harness.take_reusable())

    def test_two_harnesses_keep_two_sessions(self):
        one, two = Harness(noter()), Harness(noter())
        one.tool("note", {"text": "a"})
        self.assertIsNone(two.stored("notes"))
        with self.assertRaises(RuntimeError):
            state.get("notes")  # outside a harness's call there is no host


class HooksTests(unittest.TestCase):
    def test_the_tool_hooks_see_the_call_and_answer_in_the_sdks_types(self):
        plugin = sdk.Plugin("guard", "0.1.0")

        @plugin.on_pre_tool_use
        def pre(ctx, use):
            return sdk.deny(f"no {use.call.name} of {use.plugin}") if use.mutates else None

        @plugin.on_post_tool_use
        def post(ctx, use, result):
            return sdk.ToolResult(result.ok, result.output.upper()) if use.call.name == "shout" else None

        @plugin.on_user_prompt
        def prompt(ctx, text):
            return sdk.block("not here") if "secret" in text else sdk.add_context("be brief")

        @plugin.on_stop
        def stop(ctx, reply):
            return "go on" if reply == "halfway" else None

        harness = Harness(plugin)
        self.assertEqual(harness.pre_tool_use("shell", "rm", {"path": "a"}, mutates=True), sdk.deny("no rm of shell"))
        self.assertEqual(harness.pre_tool_use("shell", "ls"), sdk.PreToolOutcome())
        self.assertEqual(harness.post_tool_use("shell", "shout", "hi"), sdk.ToolResult(True, "HI"))
        self.assertIsNone(harness.post_tool_use("shell", "ls", "hi"))
        self.assertEqual(harness.user_prompt("a secret"), sdk.block("not here"))
        self.assertEqual(harness.user_prompt("hello"), sdk.PromptOutcome(context="be brief"))
        self.assertEqual(harness.stop("halfway"), "go on")
        self.assertIsNone(harness.stop())

    def test_a_hook_that_answers_the_wrong_type_traps(self):
        plugin = sdk.Plugin("guard", "0.1.0")

        @plugin.on_pre_tool_use
        def pre(ctx, use):
            return sdk.approve()  # a review's verdict, not a pre-tool outcome

        with self.assertRaises(Trapped) as trapped:
            Harness(plugin).pre_tool_use("shell", "rm")
        self.assertIn("not one of its answers", trapped.exception.message)


class StandInsTests(unittest.TestCase):
    def test_model_process_and_meter_answer_what_the_test_sets(self):
        plugin = sdk.Plugin("asker", "0.1.0")

        @plugin.tool("ask", "Asks the model.")
        def ask(ctx) -> str:
            return model.complete([("system", "Be brief."), ("user", "Hi?")], max_output_tokens=5).text

        @plugin.tool("run", "Runs a command.")
        def run(ctx) -> str:
            return process.run("echo hi", timeout_ms=100).stdout

        @plugin.tool("spent", "Reads the meter.")
        def spent(ctx) -> str:
            return f"{meter.read().turn_tokens} of {meter.read().caps.max_turn_tokens}, {meter.session().tokens}"

        harness = Harness(plugin)
        with self.assertRaises(sdk.PluginError) as unanswered:
            harness.tool("ask")
        self.assertIn("on_model", str(unanswered.exception))
        harness.take_model_requests()
        harness.on_model(lambda messages, most: sdk.Completion(f"{len(messages)} messages, {most} tokens", 3, 4))
        self.assertEqual(harness.tool("ask"), "2 messages, 5 tokens")
        self.assertEqual(harness.take_model_requests(),
                         [([sdk.ChatMessage("system", "Be brief."), sdk.ChatMessage("user", "Hi?")], 5)])
        harness.on_process(lambda request: sdk.RunOutput(0, f"{request.command} in {request.timeout_ms}", ""))
        self.assertEqual(harness.tool("run"), "echo hi in 100")
        self.assertEqual(harness.tool("spent"), "0 of None, 0")
        harness.set_meter(sdk.MeterReading(120, 2, 5, 0, sdk.Caps(10, max_turn_tokens=1000)))
        harness.set_session_meter(sdk.SessionReading(tokens=900, model_calls=7))
        self.assertEqual(harness.tool("spent"), "120 of 1000, 900")

    def test_another_plugins_namespace_is_read_as_stored(self):
        plugin = sdk.Plugin("reader", "0.1.0")

        @plugin.tool("peek", "Reads the todo list.")
        def peek(ctx) -> str:
            return str(state.read("todo", "items", default="none"))

        harness = Harness(plugin)
        self.assertEqual(harness.tool("peek"), "none")
        harness.store_foreign("todo", "items", [1, 2])
        self.assertEqual(harness.tool("peek"), "[1, 2]")


class ManifestTests(unittest.TestCase):
    def test_without_a_version_the_plugin_has_its_pyproject_tomls(self):
        with tempfile.TemporaryDirectory() as folder:
            root = pathlib.Path(folder)
            (root / "pyproject.toml").write_text('[project]\nname = "versioned"\nversion = "2.3.4"\n')
            (root / "versioned.py").write_text(textwrap.dedent("""\
                from agent_host_sdk import Plugin
                plugin = Plugin("versioned")
            """))
            sys.path.insert(0, folder)
            try:
                import versioned
            finally:
                sys.path.remove(folder)
            self.assertEqual(Harness(versioned.plugin).manifest().version, "2.3.4")

    def test_without_a_version_or_a_pyproject_toml_the_declaration_says_so(self):
        with self.assertRaises(ValueError) as missing:
            sdk.Plugin("p")  # this test's folder has no pyproject.toml, nor has any above it
        self.assertIn("give the plugin's version", str(missing.exception))

    def test_the_capabilities_are_what_the_plugin_declares(self):
        manifest = Harness(noter()).manifest()
        self.assertEqual(manifest.capabilities, sdk.Capabilities.CALL_TOOL | sdk.Capabilities.COMMAND
                         | sdk.Capabilities.STATUS | sdk.Capabilities.SESSION_START)
        self.assertEqual(manifest.commands, [sdk.CommandSpec("forget", "Forgets every note", "/forget")])


if __name__ == "__main__":
    unittest.main()
