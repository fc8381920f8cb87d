# The differential oracle for FHIR-AgentBench's retrieval figures: runs the benchmark's own code, read from the
# user's copy (argv[1], the folder holding metrics_utils.py and evaluation_metrics.py), on an export and its gold.
# retrieval_recall / retrieval_precision come from metrics_utils.py as they are; extract_relevant_resources_only
# (the gold-type filter) is taken out of evaluation_metrics.py by its syntax tree and run as written, since the
# module itself needs pandas, litellm and the benchmark's config at import. Only the pipeline's glue is ours:
# the merge on question_id, the flat gold list and pandas' NaN-skipping mean.
# stdin: {"gold": {question_id: {type: [ids]}}, "rows": [export rows]}; stdout: per-row figures (NaN as null) and means.
import ast
import json
import math
import os
import sys

official = sys.argv[1]
sys.path.insert(0, official)
import metrics_utils  # noqa: E402  (numpy, or the test's stand-in with nan and mean)


class _Pandas:
    @staticmethod
    def isna(x):
        return x is None or (isinstance(x, float) and math.isnan(x))


with open(os.path.join(official, "evaluation_metrics.py"), encoding="utf-8") as f:
    tree = ast.parse(f.read())
fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "extract_relevant_resources_only")
scope = {"pd": _Pandas, "json": json, "ast": ast}
exec(compile(ast.Module(body=[fn], type_ignores=[]), "evaluation_metrics.py", "exec"), scope)
extract = scope["extract_relevant_resources_only"]

data = json.load(sys.stdin)
out = []
for row in data["rows"]:
    if row["question_id"] not in data["gold"]:
        continue  # the benchmark's inner merge with the ground truth
    gold = data["gold"][row["question_id"]]
    merged = {"true_fhir_ids": gold, "agent_fhir_resources": row["agent_fhir_resources"]}
    relevant = extract(merged)
    true = sum(gold.values(), [])
    r = metrics_utils.retrieval_recall(relevant, true)
    p = metrics_utils.retrieval_precision(relevant, true, method="continuous")
    nan = lambda v: v is None or (isinstance(v, float) and math.isnan(v))
    out.append({"question_id": row["question_id"], "recall": None if nan(r) else float(r), "precision": None if nan(p) else float(p)})


def mean(key):
    vals = [o[key] for o in out if o[key] is not None]
    return sum(vals) / len(vals) if vals else None


print(json.dumps({"rows": out, "recall": mean("recall"), "precision": mean("precision")}))
