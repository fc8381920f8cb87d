// Every built-in FHIR tool, by name. Order is the order the model sees them in. The search tools declare their
// result's shape here (searchContentSchema), which MCP serves as their outputSchema.
import type { z } from 'zod';
import { findCodes } from './catalogue/find-codes.ts';
import { findPatients } from './catalogue/find-patients.ts';
import { orderMedication } from './catalogue/order-medication.ts';
import { orderService } from './catalogue/order-service.ts';
import { readResource } from './catalogue/read-resource.ts';
import { recordObservation } from './catalogue/record-observation.ts';
import { searchAllergies } from './catalogue/search-allergies.ts';
import { searchConditions } from './catalogue/search-conditions.ts';
import { searchContentSchema } from './kit/search-content-schema.ts';
import { searchDiagnosticReports } from './catalogue/search-diagnostic-reports.ts';
import { searchEncounters } from './catalogue/search-encounters.ts';
import { searchImmunizations } from './catalogue/search-immunizations.ts';
import { searchMedicationAdministrations } from './catalogue/search-medication-administrations.ts';
import { searchMedicationDispenses } from './catalogue/search-medication-dispenses.ts';
import { searchMedicationRequests } from './catalogue/search-medication-requests.ts';
import { searchMedicationStatements } from './catalogue/search-medication-statements.ts';
import { searchObservations } from './catalogue/search-observations.ts';
import { searchProcedures } from './catalogue/search-procedures.ts';
import { searchSpecimens } from './catalogue/search-specimens.ts';
import type { ToolDefinition } from './kit/tool.ts';

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
