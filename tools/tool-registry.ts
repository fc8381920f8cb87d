// Every FHIR tool, by name. Order is the order the model sees them in.
import { findCodes } from './find-codes.ts';
import { findPatients } from './find-patients.ts';
import { orderMedication } from './order-medication.ts';
import { orderService } from './order-service.ts';
import { readResource } from './read-resource.ts';
import { recordObservation } from './record-observation.ts';
import { searchAllergies } from './search-allergies.ts';
import { searchConditions } from './search-conditions.ts';
import { searchDiagnosticReports } from './search-diagnostic-reports.ts';
import { searchEncounters } from './search-encounters.ts';
import { searchImmunizations } from './search-immunizations.ts';
import { searchMedicationAdministrations } from './search-medication-administrations.ts';
import { searchMedicationDispenses } from './search-medication-dispenses.ts';
import { searchMedicationRequests } from './search-medication-requests.ts';
import { searchMedicationStatements } from './search-medication-statements.ts';
import { searchObservations } from './search-observations.ts';
import { searchProcedures } from './search-procedures.ts';
import { searchSpecimens } from './search-specimens.ts';
import type { ToolDefinition } from './tool.ts';

const all = [
  findPatients,
  readResource,
  findCodes,
  searchObservations,
  searchConditions,
  searchMedicationRequests,
  searchMedicationAdministrations,
  searchMedicationDispenses,
  searchMedicationStatements,
  searchProcedures,
  searchEncounters,
  searchAllergies,
  searchImmunizations,
  searchDiagnosticReports,
  searchSpecimens,
  recordObservation,
  orderMedication,
  orderService,
] as unknown as ToolDefinition[];

export const toolRegistry: ReadonlyMap<string, ToolDefinition> = new Map(all.map((t) => [t.name, t]));
