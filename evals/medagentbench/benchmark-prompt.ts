// MedAgentBench's prompt, read at run time from the user's copy of the benchmark and never shipped: the template is
// the `MedAgentBench_prompt` triple-quoted string of the task module's __init__.py (or a --prompt-file), the
// function list is data/medagentbench/funcs_v1.json (or --funcs), and the first user message is the template
// filled as the task module fills it: str.format with api_base, functions=json.dumps(funcs), context, question.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { pythonJsonDumps } from './python-json.ts';
import { readBenchmarkReplies, type BenchmarkReplies } from './benchmark-replies.ts';
import { BenchmarkFileError, pythonUnescape } from './python-string.ts';

export interface BenchmarkPrompt {
  template: string;
  /** json.dumps of the function list, as the task module writes it into the prompt. */
  functionsJson: string;
  /** The user turns after a GET, a failed GET, an invalid and an accepted POST (benchmark-replies.ts). */
  replies: BenchmarkReplies;
  /** Where each came from, for the log header. */
  sources: { module: string; template: string; funcs: string };
}

export async function readBenchmarkPrompt(opts: { benchmarkDir?: string; promptFile?: string; funcs?: string }): Promise<BenchmarkPrompt> {
  const dir = opts.benchmarkDir;
  // The replies always come from a task module: the checkout's, or a --prompt-file that is one.
  const module = dir
    ? path.join(dir, 'src/server/tasks/medagentbench/__init__.py')
    : opts.promptFile?.endsWith('.py')
      ? opts.promptFile
      : undefined;
  const templateFile = opts.promptFile ?? module;
  const funcsFile = opts.funcs ?? (dir ? path.join(dir, 'data/medagentbench/funcs_v1.json') : undefined);
  if (!module || !templateFile || !funcsFile)
    throw new BenchmarkFileError(
      '--protocol medagentbench needs --benchmark-dir (a MedAgentBench checkout), or a task module as --prompt-file and --funcs',
    );
  for (const f of new Set([module, templateFile, funcsFile])) if (!existsSync(f)) throw new BenchmarkFileError(`${f}: not found`);
  const moduleText = await readFile(module, 'utf8');
  const templateText = templateFile === module ? moduleText : await readFile(templateFile, 'utf8');
  // A .py file holds the template as a Python literal; any other file is the template itself.
  const template = templateFile.endsWith('.py') ? promptTemplateFromPython(templateText, templateFile) : templateText;
  let functionsJson: string;
  try {
    functionsJson = pythonJsonDumps(await readFile(funcsFile, 'utf8'));
  } catch (err) {
    throw new BenchmarkFileError(`${funcsFile}: ${(err as Error).message}`);
  }
  return {
    template,
    functionsJson,
    replies: readBenchmarkReplies(moduleText, module),
    sources: { module, template: templateFile, funcs: funcsFile },
  };
}

/** The value of `MedAgentBench_prompt = """..."""` (or '''...''') in a Python source, with Python's escapes applied. */
function promptTemplateFromPython(source: string, where = 'the task module'): string {
  const m = /^MedAgentBench_prompt\s*=\s*([rRuU]?)("""|''')([\s\S]*?)\2/m.exec(source);
  if (!m) throw new BenchmarkFileError(`${where}: no MedAgentBench_prompt = """...""" assignment`);
  return m[1].toLowerCase() === 'r' ? m[3] : pythonUnescape(m[3]);
}

/** Python's str.format with named fields only: `{name}` filled, `{{` and `}}` literal braces. */
function formatPythonTemplate(template: string, fields: Record<string, string>): string {
  return template.replace(/\{\{|\}\}|\{([^{}]*)\}|[{}]/g, (whole, name: string | undefined) => {
    if (whole === '{{') return '{';
    if (whole === '}}') return '}';
    if (name === undefined) throw new BenchmarkFileError(`the prompt template has a single '${whole}' (str.format would refuse it)`);
    if (!(name in fields))
      throw new BenchmarkFileError(`the prompt template names {${name}}; the task module fills only ${Object.keys(fields).join(', ')}`);
    return fields[name];
  });
}

export function formatBenchmarkPrompt(prompt: BenchmarkPrompt, task: { apiBase: string; context: string; question: string }): string {
  return formatPythonTemplate(prompt.template, {
    api_base: task.apiBase,
    functions: prompt.functionsJson,
    context: task.context,
    question: task.question,
  });
}
