/** A date as the API writes it: ISO 8601 in UTC, or null for no date. */
export const iso = (d: Date | null | undefined): string | null => (d ? d.toISOString() : null);
