// The Python side of `--grader refsol.py` (our own code, kept as a string so the compiled package carries it):
// it imports the user's refsol.py as `src.server.tasks.medagentbench.refsol`, standing in for the `src.` packages
// AgentBench would provide (so the benchmark's __init__.py, which needs AgentBench, never runs), then grades
// every case as eval.py and calculate_overall do: no result → not graded; an exception → a fail.
// Input on stdin, one job a line: {"dir", "fhir_base", "cases": [{"case", "history", "result"}]}; output: one JSON
// line of verdicts per job, flushed, so one process grades a whole run (refsol.py is imported once, by the first job).
// refsol prints as it grades; stdout is moved to stderr so the verdict lines stay alone.
export const REFSOL_PY_SHIM = String.raw`
import importlib, json, sys, types

def stand_in(name, path=None):
    module = types.ModuleType(name)
    if path is not None:
        module.__path__ = [path]
    sys.modules[name] = module
    return module

def main():
    out, sys.stdout = sys.stdout, sys.stderr
    refsol = None
    while True:
        line = sys.stdin.readline()
        if not line:
            break
        if not line.strip():
            continue
        job = json.loads(line)
        if refsol is None:
            stand_in('src')
            stand_in('src.server')
            stand_in('src.server.tasks')
            stand_in('src.server.tasks.medagentbench', job['dir'])
            refsol = importlib.import_module('src.server.tasks.medagentbench.refsol')
        verdicts = [grade(refsol, item, job['fhir_base']) for item in job['cases']]
        out.write(json.dumps(verdicts) + '\n')
        out.flush()

class Turn:
    def __init__(self, role, content):
        self.role = role
        self.content = content

class Results:
    def __init__(self, history, result):
        self.history = [Turn(t['role'], t['content']) for t in history]
        self.result = result

def grade(refsol, item, fhir_base):
    if item['result'] is None:
        return {'passed': False, 'reason': 'no result: not graded'}
    case = item['case']
    rule = getattr(refsol, case['id'].split('_')[0], None)
    if rule is None:
        return {'passed': False, 'reason': 'no grader for this category'}
    try:
        passed = rule(case, Results(item['history'], item['result']), fhir_base) is True
        return {'passed': passed, 'reason': 'pass' if passed else 'fail'}
    except Exception as e:
        return {'passed': False, 'reason': 'exception: %r' % (e,)}

main()
`;
