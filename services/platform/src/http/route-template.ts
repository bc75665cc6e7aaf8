/** The gateway labels its metrics with it and strips it from the answer (decision 0195). */
export const ROUTE_TEMPLATE_HEADER = 'x-route-template';
