// Every built-in FHIR tool, by name. Order is the order the model sees them in. The search tools declare their
// result's shape here (searchContentSchema), which MCP serves as their outputSchema.
import type { z } from 'zod';
import { findCodes } from './find-codes.ts';
import { findPatients } from './find-patients.ts';
import { orderMedication } from './order-medication.ts';
import { orderService } from './order-service.ts';
import { readResource } from './read-resource.ts';
import { recordObservation } from './record-observation.ts';
import { searchAllergies } from './search-allergies.ts';
import { searchConditions } from './search-conditions.ts';
import { searchContentSchema } from './search-content-schema.ts';
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

/** defineSearchTool adds `continuation` to every search tool's input; its declared type does not say so. */
type SearchInput<S extends z.ZodObject> = z.ZodObject<S['shape'] & { continuation: z.ZodOptional<z.ZodString> }>;

function searchTool<S extends z.ZodObject>(tool: ToolDefinition<S>): ToolDefinition<SearchInput<S>, typeof searchContentSchema> {
  return { ...tool, outputSchema: searchContentSchema } as unknown as ToolDefinition<SearchInput<S>, typeof searchContentSchema>;
}

/** The built-in tools as their own types (input and output), keyed by their names. */
export const builtInTools = {
  find_patients: searchTool(findPatients),
  read_resource: readResource,
  find_codes: findCodes,
  search_observations: searchTool(searchObservations),
  search_conditions: searchTool(searchConditions),
  search_medication_requests: searchTool(searchMedicationRequests),
  search_medication_administrations: searchTool(searchMedicationAdministrations),
  search_medication_dispenses: searchTool(searchMedicationDispenses),
  search_medication_statements: searchTool(searchMedicationStatements),
  search_procedures: searchTool(searchProcedures),
  search_encounters: searchTool(searchEncounters),
  search_allergies: searchTool(searchAllergies),
  search_immunizations: searchTool(searchImmunizations),
  search_diagnostic_reports: searchTool(searchDiagnosticReports),
  search_specimens: searchTool(searchSpecimens),
  record_observation: recordObservation,
  order_medication: orderMedication,
  order_service: orderService,
};

export const toolRegistry: ReadonlyMap<string, ToolDefinition> = new Map(
  Object.values(builtInTools as unknown as Record<string, ToolDefinition>).map((t) => [t.name, t]),
);
