import { Readable } from 'node:stream';
import { expect } from 'chai';
import { templateFieldsToComponents } from '../../src/providers/template-fields.js';

describe('template_fields to template components', () => {
  it('orders parameters by index and components header, body, buttons', () => {
    const components = templateFieldsToComponents([
      { component: 'BUTTON', type: 'TEXT', value: 'abc123', button_index: 0 },
      { component: 'BODY', value: 'b', index: 2 },
      { component: 'BODY', value: 'a', index: 1 },
      { component: 'HEADER', type: 'TEXT', value: 'Pedido' },
    ]);
    expect(components).to.deep.equal([
      { type: 'header', parameters: [{ type: 'text', text: 'Pedido' }] },
      {
        type: 'body',
        parameters: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      },
      { type: 'button', subType: 'url', index: 0, parameters: [{ type: 'text', text: 'abc123' }] },
    ]);
  });

  it('takes lower-case names and header media by URL', () => {
    const [header] = templateFieldsToComponents([{ component: 'header', type: 'video', value: 'https://cdn.example.com/v.mp4' }]);
    expect(header).to.deep.equal({
      type: 'header',
      parameters: [{ type: 'video', media: { from: 'url', url: 'https://cdn.example.com/v.mp4' } }],
    });
  });

  it('puts card_index fields on the cards of a carousel', () => {
    const components = templateFieldsToComponents([
      { component: 'BODY', value: 'intro', index: 1 },
      { component: 'HEADER', type: 'IMAGE', value: 'https://cdn.example.com/2.png', card_index: 1 },
      { component: 'HEADER', type: 'IMAGE', value: 'https://cdn.example.com/1.png', card_index: 0 },
      { component: 'BUTTON', type: 'PAYLOAD', value: 'BUY-1', button_index: 0, card_index: 1 },
    ]);
    expect(components.map((c) => c.type)).to.deep.equal(['body', 'carousel']);
    const cards = components[1]?.cards ?? [];
    expect(cards.map((c) => c.cardIndex)).to.deep.equal([0, 1]);
    expect(cards[1]?.components.map((c) => c.type)).to.deep.equal(['header', 'button']);
  });

  it('uses an attached file as the header media', () => {
    const stream = Readable.from([Buffer.from('x')]);
    const [header] = templateFieldsToComponents([], { from: 'stream', stream, mimeType: 'image/jpeg', fileName: 'a.jpg', size: 1 });
    expect(header?.parameters[0]).to.include({ type: 'image' });
  });

  it('names the field of every mistake', () => {
    const cases: [Parameters<typeof templateFieldsToComponents>[0], string][] = [
      [[{ component: 'FOOTER', value: 'x' }], 'template_fields[0].component: must be HEADER, BODY or BUTTON'],
      [
        [
          { component: 'BODY', value: 'x' },
          { component: 'BODY', type: 'IMAGE', value: 'x' },
        ],
        'template_fields[1].type: BODY takes TEXT',
      ],
      [[{ component: 'HEADER', type: 'AUDIO', value: 'x' }], 'template_fields[0].type: HEADER takes TEXT, IMAGE, VIDEO or DOCUMENT'],
      [[{ component: 'HEADER', type: 'IMAGE', value: 'ftp://x/y.png' }], 'template_fields[0].value: header media must be an http(s) URL'],
      [[{ component: 'BUTTON', type: 'PAYLOAD', value: 'x' }], 'template_fields[0].button_index: is required for a BUTTON field'],
      [
        [{ component: 'BUTTON', type: 'DATE', value: 'x', button_index: 0 }],
        'template_fields[0].type: BUTTON takes PAYLOAD (quick reply) or TEXT (URL button)',
      ],
      [
        [
          { component: 'BUTTON', type: 'PAYLOAD', value: 'x', button_index: 0 },
          { component: 'BUTTON', type: 'TEXT', value: 'y', button_index: 0 },
        ],
        'template_fields[1].type: button 0 mixes PAYLOAD and TEXT',
      ],
    ];
    for (const [fields, message] of cases) {
      expect(() => templateFieldsToComponents(fields)).to.throw(message);
    }
  });

  it('refuses a HEADER field and an attached header file together', () => {
    const file = { from: 'stream' as const, stream: Readable.from([]), mimeType: 'image/png', fileName: 'a.png' };
    expect(() => templateFieldsToComponents([{ component: 'HEADER', value: 'x' }], file)).to.throw(
      'template_fields: a HEADER field and an attached header file cannot both be sent',
    );
  });
});
