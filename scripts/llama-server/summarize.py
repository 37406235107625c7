#!/usr/bin/env python3
"""The check's verdicts.

    summarize.py row TEMPLATE EVENTS_JSONL CALLS_JSONL HOST_EXIT HOST_STDERR >> results.jsonl
    summarize.py table results.jsonl

`row` judges one template's turn: it passes when the server accepted every call the host
made (no 4xx/5xx recorded by the proxy) and the host reports the turn ended, not failed.
A tiny model follows no workflow well, so what it said is not judged. `table` prints every
row and exits 1 when any failed.
"""

import json
import sys
from collections import Counter


def lines(path):
    try:
        with open(path, encoding="utf-8") as file:
            for line in file:
                line = line.strip()
                if line:
                    try:
                        yield json.loads(line)
                    except ValueError:
                        yield {"type": "unreadable", "text": line}
    except FileNotFoundError:
        return


def server_message(reply):
    """llama-server's error text (`{"error": {"message": ...}}`, or the body as it came), led
    by the template's own exception when it raised one: the rest is where in the template."""
    try:
        message = json.loads(reply)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        return reply.strip()
    raised = [line for line in message.splitlines() if line.startswith("Error: Jinja Exception: ")]
    if raised:
        head = message.split("\n", 1)[0].strip()
        exception = raised[0][len("Error: "):]
        return f"{head} {exception}" if head and "CallExpression" not in head else exception
    return message


def one_line(text, limit=110):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def row(template, events_path, calls_path, exit_status, stderr_path):
    events = list(lines(events_path))
    calls = [call for call in lines(calls_path) if call.get("path", "").endswith("/chat/completions")]
    ended = [event for event in events if event.get("type") == "turn_ended"]
    errors = [event["message"] for event in events if event.get("type") == "error"]
    refused = [call for call in calls if call.get("status", 0) >= 400]
    end = ended[-1]["reason"] if ended else "none"
    if refused:
        first_error = f"HTTP {refused[0]['status']}: {server_message(refused[0].get('reply', ''))}"
    elif errors:
        first_error = errors[0]
    elif not ended:
        try:
            tail = open(stderr_path, encoding="utf-8", errors="replace").read().strip().splitlines()[-1:]
        except FileNotFoundError:
            tail = []
        first_error = f"no turn_ended event (exit {exit_status}){': ' + tail[0] if tail else ''}"
    else:
        first_error = ""
    passed = not refused and bool(ended) and end not in ("error", "cancelled")
    statuses = Counter(call.get("status") for call in calls)
    finishes = Counter(reason for call in calls for reason in call.get("finish_reasons", []))
    return {
        "template": template,
        "result": "ok" if passed else "FAIL",
        "turn_end": end,
        "model_calls": ended[-1]["iterations"] if ended else 0,
        "http": " ".join(f"{status}x{count}" for status, count in sorted(statuses.items())) or "-",
        "finish": " ".join(f"{reason}x{count}" for reason, count in sorted(finishes.items())) or "-",
        "exit": int(exit_status),
        "first_error": one_line(first_error),
    }


COLUMNS = [
    ("template", "template"),
    ("result", "result"),
    ("turn_end", "turn end"),
    ("model_calls", "model calls"),
    ("http", "HTTP"),
    ("finish", "finish reasons"),
    ("exit", "exit"),
    ("first_error", "first error"),
]


def table(results_path):
    rows = list(lines(results_path))
    cells = [[str(r.get(key, "")) for key, _ in COLUMNS] for r in rows]
    widths = [max([len(title)] + [len(c[i]) for c in cells]) for i, (_, title) in enumerate(COLUMNS)]
    def show(values):
        print(" | ".join(v.ljust(w) for v, w in zip(values, widths)).rstrip())
    show([title for _, title in COLUMNS])
    show(["-" * w for w in widths])
    for c in cells:
        show(c)
    failed = [r["template"] for r in rows if r.get("result") != "ok"]
    print(f"\n{len(rows) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed or not rows else 0


if __name__ == "__main__":
    if sys.argv[1] == "row":
        print(json.dumps(row(*sys.argv[2:7])))
    elif sys.argv[1] == "table":
        sys.exit(table(sys.argv[2]))
    else:
        sys.exit(f"unknown mode {sys.argv[1]!r}: row or table")
