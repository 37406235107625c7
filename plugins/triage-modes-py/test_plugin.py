"""The plugin's unit tests, natively through the SDK's harness (the checks of
plugins/triage-modes/src/tests.rs): from the repository,
`PYTHONPATH=plugins/sdk-python python3 -m unittest discover -s plugins/triage-modes-py`."""

import pathlib
import tomllib
import unittest

from agent_host_sdk import ChoiceOption, ChoiceWidget, PluginError
from agent_host_sdk.testing import Emitted, Harness
from plugin import plugin


def triage() -> Harness:
    return Harness(plugin)


def stages(current: str | None) -> list:
    return [ChoiceWidget(
        id="stage", label="Stage", current=current, category="mode", command=None,
        options=[
            ChoiceOption("triage", "Triage", "Work out what the report is about and write the open questions down"),
            ChoiceOption("research", "Research", "Answer the open questions; review opens when every todo is done"),
            ChoiceOption("review", "Review", "Summarise the findings and recommend what comes next"),
        ],
    )]


class TriageModesTests(unittest.TestCase):
    def test_stages_move_forward_and_review_waits_for_the_todos(self):
        harness = triage()
        self.assertEqual(harness.status(), "triage")
        with self.assertRaises(PluginError) as still:
            harness.tool("advance_stage", {"to": "triage"})
        self.assertEqual(str(still.exception), "stages only move forward: you are in `triage`, so `triage` is behind you")
        self.assertEqual(harness.tool("advance_stage", {"to": "research"}), "Stage is now research.")
        self.assertEqual(harness.take_events(), [
            Emitted("mode-changed", {"from": "triage", "to": "research", "by": "model"}, "mode → research"),
        ])
        harness.store_foreign("todo", "items", [{"id": 1, "title": "why red", "isComplete": False}])
        with self.assertRaises(PluginError) as closed:
            harness.tool("advance_stage", {"to": "review"})
        self.assertEqual(str(closed.exception),
                         "review stays closed while todos are open. Finish or remove these first:\n- why red")
        self.assertEqual(harness.stored("mode"), "research", "a refused advance moves nothing")
        harness.store_foreign("todo", "items", [{"id": 1, "title": "why red", "isComplete": True}])
        harness.tool("advance_stage", {"to": "review"})
        with self.assertRaises(PluginError) as back:
            harness.tool("advance_stage", {"to": "triage"})
        self.assertEqual(str(back.exception), "stages only move forward: you are in `review`, so `triage` is behind you")
        self.assertEqual(harness.command("stage"), "stage: review")

    def test_a_stage_it_does_not_know_is_refused_naming_the_stages(self):
        with self.assertRaises(PluginError) as unknown:
            triage().tool("advance_stage", {"to": "shipping"})
        self.assertEqual(str(unknown.exception), "unknown stage `shipping`; the stages are `triage`, `research`, `review`")

    def test_each_stage_brings_its_own_instructions_reusable_until_the_stage_moves(self):
        harness = triage()
        first = harness.provide()
        self.assertIn("You are in the `triage` stage", first.text)
        self.assertIn("The next is `research`.", first.text)
        self.assertIn("You are triaging.", first.text)
        self.assertEqual([tool.name for tool in first.tools], ["advance_stage"], "declared once, offered first")
        self.assertTrue(harness.take_reusable(), "the instructions depend on the stored stage only")
        harness.tool("advance_stage", {"to": "research"})
        self.assertIn("You are researching.", harness.provide().text)

    def test_it_takes_no_configuration(self):
        self.assertEqual(triage().requires, [], "only review needs the todo grant")
        with self.assertRaises(PluginError) as refused:
            Harness(plugin, {"stages": 2})
        self.assertEqual(str(refused.exception),
                         "this plugin takes no configuration (found `stages`); remove its [plugin.config] table")

    def test_the_view_shows_the_stages_and_the_current_one_with_no_command(self):
        harness = triage()
        self.assertTrue(harness.shows())
        self.assertEqual(harness.view(), stages("triage"), "a session that never advanced is in triage")
        harness.tool("advance_stage", {"to": "research"})
        self.assertEqual(harness.view(), stages("research"))

    def test_a_stage_that_cannot_be_read_leaves_the_choice_without_a_current_value(self):
        harness = triage()
        harness.store("mode", "shipping")
        self.assertEqual(harness.view(), stages(None))
        self.assertIsNone(harness.status())

    def test_its_version_is_the_one_pyproject_toml_gives(self):
        with (pathlib.Path(__file__).parent / "pyproject.toml").open("rb") as file:
            version = tomllib.load(file)["project"]["version"]
        manifest = triage().manifest()
        self.assertEqual((manifest.name, manifest.version), ("triage-modes", version))


if __name__ == "__main__":
    unittest.main()
