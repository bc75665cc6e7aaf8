import type { LeadSource } from '../catalog/catalog.entity.js';
import type { Origin, OriginRequest } from '../marketing/origin.js';

/** Filled at start, so the sales core reaches marketing without knowing its storage. */
export interface OriginSource {
  resolve(companyId: string, request: OriginRequest): Promise<Origin>;
  leadSource(companyId: string, name: string): Promise<LeadSource>;
  conversionTool(companyId: string, name: string): Promise<unknown>;
}
