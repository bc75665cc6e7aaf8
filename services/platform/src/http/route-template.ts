/**
 * The route template (`/integrations/external/leads/{ref}`) that served a request, named in the answer: the gateway
 * labels its request metrics with it and takes it off the answer (decision 0195).
 */
export const ROUTE_TEMPLATE_HEADER = 'x-route-template';
