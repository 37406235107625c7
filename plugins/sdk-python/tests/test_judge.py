"""The `judge` hooks (contract 0.2.7) of a declared plugin, natively through the SDK's
harness: `python3 -m unittest discover -s plugins/sdk-python/tests`."""

import pathlib
import sys
import unittest
from dataclasses import dataclass

sys.path.insert(0, str(pathlib.Path(__file__).parent.parent))
import agent_host_sdk as sdk  # noqa: E402  (from this checkout's SDK)
from agent_host_sdk.testing import Harness  # noqa: E402


@dataclass
class Config:
    strict: bool = False


def errors(harness: Harness) -> list[str]:
    return [message for level, message in harness.logs if level == "error"]


class JudgeTests(unittest.TestCase):
    def test_spec_names_only_the_hooks_the_plugin_declares(self):
        plugin = sdk.Plugin("p", "0.1.0")
        self.assertEqual(Harness(plugin).judge_spec(), sdk.JudgeSpec(turn_end=False, review=False, queued=False))

        @plugin.on_review
        def review(ctx, call, asked):
            return None

        self.assertEqual(Harness(plugin).judge_spec(), sdk.JudgeSpec(turn_end=False, review=True, queued=False))

        @plugin.on_turn_end
        def turn_end(ctx, reply):
            return None

        @plugin.on_queued
        def queued(ctx):
            return None

        self.assertEqual(Harness(plugin).judge_spec(), sdk.JudgeSpec(turn_end=True, review=True, queued=True))

    def test_turn_end_gets_the_typed_context_and_the_reply_and_returns_its_verdict(self):
        plugin = sdk.Plugin("p", "0.1.0", Config)
        seen = []

        @plugin.on_turn_end
        def turn_end(ctx, reply):
            seen.append((ctx, reply))
            if reply == "more":
                return sdk.continue_turn("Keep going.")
            if reply == "stuck":
                return sdk.stop_turn(sdk.BLOCKED, "no way forward")
            return None

        harness = Harness(plugin, {"strict": True})
        harness.model_calls, harness.turn_iteration = 2, 1
        self.assertEqual(harness.turn_end("more"), sdk.TurnVerdict("continue", "Keep going."))
        self.assertEqual(harness.turn_end("stuck"), sdk.TurnVerdict("stop", "no way forward", sdk.StopReason.BLOCKED))
        self.assertEqual(harness.turn_end("done"), sdk.end_turn())
        self.assertEqual(seen[0], (sdk.Context("test-session", Config(strict=True), 2, 1), "more"))
        self.assertEqual(errors(harness), [])

    def test_a_turn_end_that_raises_ends_the_turn_and_is_logged(self):
        plugin = sdk.Plugin("p", "0.1.0")

        @plugin.on_turn_end
        def turn_end(ctx, reply):
            raise RuntimeError("judge broke")

        harness = Harness(plugin)
        self.assertEqual(harness.turn_end("hi"), sdk.end_turn())
        self.assertEqual(len(errors(harness)), 1)
        self.assertIn("Traceback", errors(harness)[0])
        self.assertIn("RuntimeError: judge broke", errors(harness)[0])
        self.assertTrue(errors(harness)[0].startswith("p: `turn-end` failed"), errors(harness)[0])

    def test_a_turn_end_that_returns_no_verdict_ends_the_turn_and_is_logged(self):
        plugin = sdk.Plugin("p", "0.1.0")

        @plugin.on_turn_end
        def turn_end(ctx, reply):
            return "Keep going."  # a string, not continue_turn(...)

        harness = Harness(plugin)
        self.assertEqual(harness.turn_end("hi"), sdk.end_turn())
        self.assertIn("not one of its verdicts", errors(harness)[0])

    def test_review_returns_the_hooks_verdict_and_none_abstains(self):
        plugin = sdk.Plugin("p", "0.1.0")
        seen = []

        @plugin.on_review
        def review(ctx, call, asked):
            seen.append((call.plugin, call.call.name, call.call.arguments, asked))
            return {"rm": sdk.refuse("it deletes files"), "make": sdk.approve(),
                    "odd": sdk.review_error("cannot tell")}.get(call.call.name)

        harness = Harness(plugin)
        self.assertEqual(harness.review("shell", "rm", {"path": "a"}, "asks"), sdk.refuse("it deletes files"))
        self.assertEqual(harness.review("shell", "make", None, "asks"), sdk.approve())
        self.assertEqual(harness.review("shell", "odd", None, "asks"), sdk.review_error("cannot tell"))
        self.assertEqual(harness.review("shell", "ls", None, "asks"), sdk.abstain())
        self.assertEqual(seen[0], ("shell", "rm", '{"path": "a"}', "asks"))
        self.assertEqual(errors(harness), [])

    def test_a_review_that_raises_is_an_error_never_an_allow_or_a_deny(self):
        plugin = sdk.Plugin("p", "0.1.0")

        @plugin.on_review
        def review(ctx, call, asked):
            raise sdk.PluginError("the policy model did not answer")

        harness = Harness(plugin)
        self.assertEqual(harness.review("shell", "rm", None, "asks"),
                         sdk.review_error("the policy model did not answer"))
        self.assertIn("Traceback", errors(harness)[0])

        plugin = sdk.Plugin("q", "0.1.0")

        @plugin.on_review
        def crash(ctx, call, asked):
            return {}["verdict"]

        self.assertEqual(Harness(plugin).review("shell", "rm", None, "asks"), sdk.review_error("KeyError: 'verdict'"))

    def test_a_review_that_returns_a_permission_outcome_is_an_error(self):
        plugin = sdk.Plugin("p", "0.1.0")

        @plugin.on_review
        def review(ctx, call, asked):
            return sdk.allow()  # the pre-tool-use outcome, not approve()

        verdict = Harness(plugin).review("shell", "rm", None, "asks")
        self.assertEqual(verdict.kind, "error")
        self.assertIn("not one of its verdicts", verdict.reason)

    def test_a_review_under_a_configuration_that_does_not_fit_is_an_error(self):
        plugin = sdk.Plugin("p", "0.1.0", Config)
        called = []

        @plugin.on_review
        def review(ctx, call, asked):
            called.append(call)
            return sdk.approve()

        harness = Harness(plugin)
        # What the host sends every call no longer fits (the plugin changed under a session).
        harness._config = '{"strict": "yes"}'
        verdict = harness.review("shell", "rm", None, "asks")
        self.assertEqual(verdict.kind, "error")
        self.assertTrue(verdict.reason.startswith("p cannot read its configuration: "), verdict.reason)
        self.assertEqual(called, [], "the hook is not run")

    def test_queued_returns_the_prompt_and_none_when_the_hook_raises(self):
        plugin = sdk.Plugin("p", "0.1.0")
        prompts = iter(["Work toward the goal", None])

        @plugin.on_queued
        def queued(ctx):
            prompt = next(prompts)  # StopIteration the third time
            return prompt

        harness = Harness(plugin)
        self.assertEqual(harness.queued(), "Work toward the goal")
        self.assertIsNone(harness.queued())
        self.assertEqual(errors(harness), [])
        self.assertIsNone(harness.queued())
        self.assertIn("StopIteration", errors(harness)[0])

    def test_hooks_the_plugin_does_not_declare_decide_nothing(self):
        harness = Harness(sdk.Plugin("p", "0.1.0"))
        self.assertEqual(harness.turn_end("hi"), sdk.end_turn())
        self.assertEqual(harness.review("shell", "rm", None, "asks"), sdk.abstain())
        self.assertIsNone(harness.queued())


if __name__ == "__main__":
    unittest.main()
