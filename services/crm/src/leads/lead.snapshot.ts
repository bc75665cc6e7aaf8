import { salesSnapshot } from '../sales/sales.snapshot.js';

/** LeadSnapshot (spec "Lead payloads"): the shared sales snapshot as it is, `deals` included. */
export const leadSnapshot = salesSnapshot;
export type LeadSnapshot = ReturnType<typeof leadSnapshot>;
