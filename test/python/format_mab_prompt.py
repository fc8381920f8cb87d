"""Prints MedAgentBench's first user message for each task, formatted by Python from the benchmark's own task module.

Usage: format_mab_prompt.py BENCHMARK_DIR API_BASE TASKS_JSON
BENCHMARK_DIR is a checkout layout (src/server/tasks/medagentbench/__init__.py, data/medagentbench/funcs_v1.json).
AgentBench's own modules (src.server.task, src.typings) are stubbed: only the prompt constant is used. Output: one
JSON list of strings, in task order.
"""
import json
import os
import sys
import types

bench_dir, api_base, tasks_path = sys.argv[1:4]
sys.path.insert(0, bench_dir)


class _Stub:
    def __init__(self, *args, **kwargs):
        pass


task_mod = types.ModuleType("src.server.task")
task_mod.Task = _Stub
task_mod.Session = _Stub
typings_mod = types.ModuleType("src.typings")
for name in ("TaskOutput", "SampleStatus", "AgentOutputStatus"):
    setattr(typings_mod, name, _Stub)
sys.modules["src.server.task"] = task_mod
sys.modules["src.typings"] = typings_mod

import src.server.tasks.medagentbench as module  # noqa: E402  (the benchmark's own task module)

with open(os.path.join(bench_dir, "data", "medagentbench", "funcs_v1.json")) as f:
    funcs = json.load(f)
with open(tasks_path) as f:
    tasks = json.load(f)
# The very call start_sample makes.
prompts = [
    module.MedAgentBench_prompt.format(
        api_base=api_base, functions=json.dumps(funcs), context=case["context"], question=case["instruction"]
    )
    for case in tasks
]
print(json.dumps(prompts))
