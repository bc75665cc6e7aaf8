import sanitizeHtml from 'sanitize-html';

/**
 * An allowlist (decision 0020): URLs are checked after entity decoding, so `jav&#x09;ascript:` is caught, and text is
 * re-escaped on output, so no markup survives as text.
 */

// Elements whose content is dropped with them (not kept as text), beyond the library's defaults.
const NON_TEXT_TAGS = ['script', 'style', 'textarea', 'option', 'noscript', 'title', 'iframe', 'xmp', 'noembed', 'noframes', 'template'];

const BASIC_FORMATTING = ['p', 'br', 'b', 'strong', 'i', 'em', 'u', 's', 'strike', 'del', 'ins', 'sub', 'sup', 'mark', 'small', 'span'];
const LISTS = ['ul', 'ol', 'li'];
const TABLES = ['table', 'thead', 'tbody', 'tfoot', 'tr', 'th', 'td', 'caption', 'colgroup', 'col'];
const BLOCKS = ['div', 'blockquote', 'pre', 'code', 'hr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6'];

const linkOptions = {
  allowedSchemes: ['http', 'https', 'mailto', 'tel'],
  allowedSchemesByTag: {},
  allowedSchemesAppliedToAttributes: ['href'],
  allowProtocolRelative: false,
  // Links open outside the app and cannot reach back into it (window.opener) or pass page rank.
  transformTags: {
    a: (tagName: string, attribs: sanitizeHtml.Attributes) => ({
      tagName,
      attribs: { ...attribs, rel: 'noopener noreferrer nofollow' },
    }),
  },
};

const descriptionOptions: sanitizeHtml.IOptions = {
  ...linkOptions,
  allowedTags: [...BASIC_FORMATTING, ...LISTS, ...TABLES, ...BLOCKS, 'a'],
  allowedAttributes: {
    a: ['href', 'title', 'target', 'rel'],
    ol: ['start', 'type', 'reversed'],
    li: ['value'],
    th: ['colspan', 'rowspan', 'scope'],
    td: ['colspan', 'rowspan'],
    col: ['span'],
    colgroup: ['span'],
  },
  allowedClasses: {},
  allowedStyles: {},
  disallowedTagsMode: 'discard',
  nonTextTags: NON_TEXT_TAGS,
  allowVulnerableTags: false,
};

/** The meeting description keeps basic formatting, lists and links; no tables or headings. */
const meetingDescriptionOptions: sanitizeHtml.IOptions = {
  ...descriptionOptions,
  allowedTags: [...BASIC_FORMATTING, ...LISTS, 'blockquote', 'a'],
  allowedAttributes: { a: ['href', 'title', 'target', 'rel'], ol: ['start', 'type', 'reversed'], li: ['value'] },
};

const textOnly: sanitizeHtml.IOptions = { allowedTags: [], allowedAttributes: {}, nonTextTags: NON_TEXT_TAGS };

export const sanitizeDescription = (html: string): string => sanitizeHtml(html, descriptionOptions);
export const sanitizeMeetingDescription = (html: string): string => sanitizeHtml(html, meetingDescriptionOptions);

/** What meeting_description's length limit counts: tags removed, entities decoded, white space collapsed. */
export function normalizedText(html: string): string {
  return sanitizeHtml(html, textOnly)
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}
