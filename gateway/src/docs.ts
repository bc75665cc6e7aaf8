import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { type Request, type Response, Router } from 'express';

/** Served from swagger-ui-dist, no CDN (decision 0101). */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>CRM integration API</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

const INIT = `window.ui = SwaggerUIBundle({
  url: '/integrations/external/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
  validatorUrl: null,
  persistAuthorization: false,
});
`;

const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; connect-src 'self'";

export function docsRouter(): Router {
  const dist = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  const files = new Map<string, { type: string; body: Buffer }>(
    Object.entries(ASSETS).map(([name, type]) => [name, { type, body: readFileSync(join(dist, name)) }]),
  );
  files.set('init.js', { type: 'text/javascript; charset=utf-8', body: Buffer.from(INIT) });
  const send = (res: Response, type: string, body: Buffer | string, maxAge: number) => {
    res.set({
      'content-type': type,
      'cache-control': `public, max-age=${maxAge}`,
      'content-security-policy': CSP,
      'x-content-type-options': 'nosniff',
    });
    res.send(body);
  };
  const r = Router();
  r.get(['/docs', '/docs/'], (_req: Request, res: Response) => send(res, 'text/html; charset=utf-8', PAGE, 300));
  r.get('/docs/:file', (req: Request, res: Response, next) => {
    const file = files.get(String(req.params.file));
    if (!file) return next();
    send(res, file.type, file.body, 3600);
  });
  return r;
}
