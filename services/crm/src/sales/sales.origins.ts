import type { LeadSource } from '../catalog/catalog.entity.js';
import type { Origin, OriginRequest } from '../marketing/origin.js';

/**
 * Where the origin of a record comes from: marketing's lead sources, trackers and conversion tools, found or made by
 * name. service.ts fills it at start, so the sales core reaches them without knowing how marketing stores them.
 */
export interface OriginSource {
  /** Origin resolution (POST /leads rule 2): the manual lead source, the tracker's, or one found or made by name. */
  resolve(companyId: string, request: OriginRequest): Promise<Origin>;
  /** The company's lead source of this name, or a new one. */
  leadSource(companyId: string, name: string): Promise<LeadSource>;
  /** The company's conversion tool of this name, or a new one. */
  conversionTool(companyId: string, name: string): Promise<unknown>;
}
