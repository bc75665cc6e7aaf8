/**
 * The public form as a plain HTML page for a person with a browser (decision 0082): no script, no external
 * resource, every value from the link escaped. The form posts urlencoded to the page's own address.
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);

/** Headers of every page: nothing cached or framed, the token in the address never sent on as a referrer. */
export const PAGE_HEADERS: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
};

const STYLE =
  'body{font-family:system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;color:#222}' +
  'fieldset{border:0;padding:0;margin:1rem 0}label{margin-right:.75rem}textarea{width:100%;min-height:6rem}' +
  'button{margin-top:1rem;padding:.5rem 1.5rem}';

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>
`;
}

export function formPage(form: { title: string; question: string; max_score: number }): string {
  const scores = Array.from({ length: form.max_score }, (_, i) => i + 1)
    .map((n) => `<label><input type="radio" name="score" value="${n}" required> ${n}</label>`)
    .join('\n');
  return page(
    form.title,
    `<h1>${escapeHtml(form.title)}</h1>
<form method="post">
<fieldset>
<legend>${escapeHtml(form.question)} (1 = lowest, ${form.max_score} = highest)</legend>
${scores}
</fieldset>
<p><label for="comment">Comment (optional)</label></p>
<textarea id="comment" name="comment" maxlength="2000"></textarea>
<button type="submit">Send</button>
</form>`,
  );
}

export const thanksPage = () => page('Thank you', '<h1>Thank you</h1>\n<p>Your answer was recorded.</p>');

export const errorPage = (statusCode: number, message: string) =>
  page('Satisfaction form', `<h1>${statusCode === 404 ? 'Link not found' : 'Cannot answer'}</h1>\n<p>${escapeHtml(message)}</p>`);
