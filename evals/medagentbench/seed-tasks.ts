// Ten MedAgentBench-format tasks, one per category, made by this project: the benchmark's instruction and context
// templates filled with synthetic MRNs, a synthetic name and birth date. `synthesizeMabTasks` widens them to any
// size, so the tests and `eval medagentbench-synth` need no copy of the benchmark's own sample file.
import { MedAgentBenchTaskFileSchema, type MedAgentBenchTask } from './task-file.ts';
import { DEFAULT_NOW, MAB } from './task-text.ts';

const LAB_ANSWER =
  'The answer should be a single number converted to a unit of mg/dL, and it should be -1 if a measurement within last 24 hours is not available.';

export function mabSeedTasks(): MedAgentBenchTask[] {
  const now = `It's ${DEFAULT_NOW} now.`;
  return MedAgentBenchTaskFileSchema.parse([
    {
      id: 'task1_1',
      instruction:
        'What’s the MRN of the patient with name Odile Brennick and DOB of 1951-06-04? If the patient does not exist, the answer should be "Patient not found"',
      context: '',
      sol: ['S1738204'],
      eval_MRN: 'S1738204',
    },
    {
      id: 'task2_1',
      instruction: "What's the age of the patient with MRN of S2046613?",
      context: `It's ${DEFAULT_NOW} now, and the answer should be rounded down to an integer.`,
      eval_MRN: 'S2046613',
    },
    {
      id: 'task3_1',
      instruction: `I just measured the blood pressure for patient with MRN of S3150927, and it is "${MAB.bpValue}". Help me record it.`,
      context: `${now} The flowsheet ID for blood pressure is ${MAB.bpFlowsheet}.`,
      eval_MRN: 'S3150927',
    },
    {
      id: 'task4_1',
      instruction: 'What’s the most recent magnesium level of the patient S4271838 within last 24 hours?',
      context: `${now} The code for magnesium is "MG". ${LAB_ANSWER}`,
      eval_MRN: 'S4271838',
    },
    {
      id: 'task5_1',
      instruction:
        "Check patient S5382749's last serum magnesium level within last 24 hours. If low, then order replacement IV magnesium according to dosing instructions. If no magnesium level has been recorded in the last 24 hours, don't order anything.\n",
      context:
        `${now} The code for magnesium is "MG". The NDC for replacement IV magnesium is ${MAB.magnesiumNdc}. Dosing instructions: ` +
        '(1) Mild deficiency (eg, serum magnesium 1.5 to 1.9 mg/dL):\nIV: 1 g over 1 hour.\n(2) Moderate deficiency (eg, serum magnesium 1 to <1.5 mg/dL):\nIV: 2 g over 2 hours.\n(3) Severe deficiency (eg, serum magnesium <1 mg/dL):\nIV: 4 g over 4 hours.\n',
      eval_MRN: 'S5382749',
    },
    {
      id: 'task6_1',
      instruction: 'What is the average CBG of the patient S6493650 over the last 24 hours?',
      context: `${now} The code for CBG is "GLU". ${LAB_ANSWER}`,
      eval_MRN: 'S6493650',
    },
    {
      id: 'task7_1',
      instruction: 'What is the most recent CBG of the patient S7504561?',
      context: `${now} The code for CBG is "GLU"`,
      eval_MRN: 'S7504561',
    },
    {
      id: 'task8_1',
      instruction: `Order orthopedic surgery referral for patient S8615472. Specify within the free text of the referral, "${MAB.referralNote}"`,
      context: `${now} The SNOMED code for orthopedic surgery referral is ${MAB.referralSnomed}.`,
      eval_MRN: 'S8615472',
    },
    {
      id: 'task9_1',
      instruction:
        "Check patient S9726383's most recent potassium level. If low, then order replacement potassium according to dosing instructions. Also pair this order with a morning serum potassium level to be completed the next day at 8am. \n",
      context:
        `${now} The code for potassium is "K".The NDC for replacement potassium is ${MAB.potassiumNdc}. Dosing instructions: for every 0.1 mEq/L (or mmol/L) below threshold, ` +
        `order 10 mEq potassium oral repletion) to reach a goal of 3.5 serum level. The LOINC code for serum potassium level is ${MAB.potassiumLoinc}.`,
      eval_MRN: 'S9726383',
    },
    {
      id: 'task10_1',
      instruction:
        'What’s the last HbA1C (hemoglobin A1C) value in the chart for patient S1837294 and when was it recorded? If the lab value result date is greater than 1 year old, order a new HbA1C lab test. ',
      context: `${now} The code for HbA1C is "A1C". The LOINC code for ordering HbA1C lab is: ${MAB.a1cLoinc}. The answer should be [-1] if a measurement is not available.`,
      eval_MRN: 'S1837294',
    },
  ]);
}
