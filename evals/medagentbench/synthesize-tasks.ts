// Widens the ten public sample tasks into a full-size MedAgentBench-format file (N per category) by varying
// MRNs, names and birth dates, so the whole pipeline can be exercised at benchmark scale with synthetic data.
import { fnv1a } from '../hash.ts';
import { categoryOf, mrnOf, type MedAgentBenchTask } from './task-file.ts';
import { parseNameAndDob } from './task-text.ts';

const GIVEN = ['Elliot', 'Marisol', 'Tobias', 'Ingrid', 'Desmond', 'Priya', 'Lucian', 'Odette', 'Caspian', 'Wren'];
const FAMILY = ['Ashdown', 'Belmonte', 'Carrow', 'Dunleavy', 'Everhart', 'Fairweather', 'Galloway', 'Holloway', 'Ingram', 'Jessup'];

export function synthesizeMabTasks(samples: MedAgentBenchTask[], perCategory = 30): MedAgentBenchTask[] {
  const out: MedAgentBenchTask[] = [];
  const used = new Set<string>();
  for (const sample of samples) {
    const category = categoryOf(sample.id);
    out.push(sample);
    if (sample.eval_MRN) used.add(sample.eval_MRN);
    for (let k = 2; k <= perCategory; k++) {
      const id = `${category}_${k}`;
      let h = fnv1a(id);
      let mrn = `S${(1_000_000 + (h % 8_999_999)).toString()}`;
      while (used.has(mrn)) mrn = `S${(1_000_000 + ((h = fnv1a(mrn)) % 8_999_999)).toString()}`;
      used.add(mrn);
      if (category === 'task1') {
        const who = parseNameAndDob(sample.instruction);
        const given = GIVEN[h % GIVEN.length];
        const family = FAMILY[(h >>> 8) % FAMILY.length];
        const dob = `19${30 + (h % 70)}-${String(1 + ((h >>> 4) % 12)).padStart(2, '0')}-${String(1 + ((h >>> 9) % 28)).padStart(2, '0')}`;
        const instruction = who
          ? sample.instruction.replace(`${who.given} ${who.family}`, `${given} ${family}`).replace(who.birthDate, dob)
          : sample.instruction;
        const notFound = k % 4 === 0;
        // As in the official file, a "Patient not found" task has no eval_MRN.
        out.push(
          notFound
            ? { id, instruction, context: sample.context, sol: ['Patient not found'] }
            : { id, instruction, context: sample.context, eval_MRN: mrn, sol: [mrn] },
        );
      } else {
        out.push({ id, instruction: sample.instruction.split(mrnOf(sample)).join(mrn), context: sample.context, eval_MRN: mrn });
      }
    }
  }
  return out;
}
