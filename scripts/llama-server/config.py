#!/usr/bin/env python3
"""Writes the check's deployment: the repository's stock config.toml with its `[model]`
table pointed at the local server, and every path made absolute so the file can live in a
scratch folder.

    config.py REPO_ROOT BASE_URL SESSIONS_DB CACHE_DIR [--injected-as MODE]
              [--force-tools --max-iterations N] > config.toml

`--force-tools` asks the server for a tool call in every reply (`tool_choice: "required"`
through `[model] extra_body`): llama-server then constrains the output with a grammar of the
template's tool-call syntax, so that tool calls and results go back through the template,
call after call, up to `--max-iterations`. Where that syntax lets text come before the call
(Qwen's, Mistral's), a small model may talk to the token limit instead.

The plugins, their order and their settings are the stock ones, whatever config.toml says
today: the check is of the deployment a newcomer runs, not of one written for it.
"""

import argparse
import os
import re
import sys
import tomllib

parser = argparse.ArgumentParser()
for name in ("root", "base_url", "sessions", "cache_dir"):
    parser.add_argument(name)
parser.add_argument("--injected-as", default="")
parser.add_argument("--force-tools", action="store_true")
parser.add_argument("--max-iterations", type=int)
args = parser.parse_args()
root, base_url, sessions, cache_dir = args.root, args.base_url, args.sessions, args.cache_dir

MODEL = f"""[model]
provider = "openai"
base_url = "{base_url}"
model = "SmolLM2-135M-Instruct"
# No key: the local server asks for none, and a key from the caller's shell must not leak in.
api_key_env = "AGENT_HOST_LLAMA_CHECK_KEY"
temperature = 0
max_output_tokens = 256
timeout_secs = 900
first_byte_timeout_secs = 600
idle_timeout_secs = 300
# A refusal is deterministic here: retrying it only repeats it.
max_retries = 0
"""
if args.injected_as:
    MODEL += f'injected_as = "{args.injected_as}"\n'
if args.force_tools:
    MODEL += 'extra_body = { tool_choice = "required" }\n'

HEADER = re.compile(r"^\s*\[\[?\s*([A-Za-z0-9_.\-]+)\s*\]\]?\s*(#.*)?$")
stock = open(os.path.join(root, "config.toml"), encoding="utf-8").read()
out, table, model_written = [], None, False
for line in stock.splitlines():
    header = HEADER.match(line)
    if header:
        table = header.group(1)
        if table == "model":
            out.append(MODEL)
            model_written = True
            continue
    if table == "model":
        continue
    key = line.split("=", 1)[0].strip()
    value = line.split("=", 1)[1].strip() if "=" in line else ""
    if table == "agent" and key == "max_iterations" and args.max_iterations:
        line = f"max_iterations = {args.max_iterations}"
    elif table == "storage" and key == "path":
        line = f'path = "{sessions}"'
    elif table == "runtime" and key == "cache_dir":
        line = f'cache_dir = "{cache_dir}"'
    elif table == "plugin" and key == "path" and value.startswith('"') and not value.startswith('"/'):
        line = f'path = "{os.path.join(root, value.strip(chr(34)))}"'
    out.append(line)
if not model_written:
    out.append(MODEL)
text = "\n".join(out) + "\n"

parsed = tomllib.loads(text)
assert parsed["model"]["base_url"] == base_url, "the [model] table was not replaced"
assert parsed.get("plugin"), "the stock config has no [[plugin]]"
assert not args.max_iterations or parsed["agent"]["max_iterations"] == args.max_iterations
sys.stdout.write(text)
