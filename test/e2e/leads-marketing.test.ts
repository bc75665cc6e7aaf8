import { expect } from 'chai';
import type pg from 'pg';
import type { client } from '../support/client.js';
import type { adminOf, Tenant } from '../support/fixtures.js';
import { openTenants } from '../support/session.js';
import type { Stack } from '../support/stack.js';

/**
 * The marketing part of POST /leads and GET /leads/{id}, through the gateway: the tracking object's rules,
 * origin resolution (POST /leads rule 2), consent resolution (rule 3 and "Measurement consent") and the
 * detail's lead_source and marketing_lead_source.
 */
describe('POST /leads marketing tracking, origin and consent; GET /leads/{id} lead_source and marketing_lead_source', () => {
  let stack: Stack;
  let call: ReturnType<typeof client>['call'];
  let admin: ReturnType<typeof adminOf>;
  let db: pg.Client;
  let t: Tenant;
  let other: Tenant;
  const sources: Record<string, { id: string; name: string; logo: string | null }> = {};
  const trackers: Record<string, { id: string; code: string; lead_source_id: string; active: boolean }> = {};

  const create = (body: unknown, tenant = t) => call('POST', '/integrations/external/leads', { token: tenant.key.key, body });
  const get = (ref: string | number, tenant = t) => call('GET', `/integrations/external/leads/${ref}`, { token: tenant.key.key });
  const created = async (body: Record<string, unknown>, tenant = t) => {
    const res = await create({ title: 'Marketing lead', ...body }, tenant);
    expect(res.status, res.text).to.equal(201);
    return res.body as { id: string; code: number; title: string; measurement_consent: string };
  };
  const detail = async (id: string) => {
    const res = await get(id);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };
  const rows = async <R extends pg.QueryResultRow = any>(sql: string, params: unknown[] = []) => (await db.query<R>(sql, params)).rows;
  const acquisitionsOf = (leadId: string) =>
    rows('select * from crm.marketing_acquisitions where lead_id = $1 order by created_at', [leadId]);
  const sourcesNamed = (companyId: string, name: string) =>
    rows('select id, name from crm.lead_sources where company_id = $1 and lower(name) = lower($2)', [companyId, name]);
  const leadRow = async (id: string) => (await rows('select * from crm.leads where id = $1', [id]))[0];
  /** The code the next accepted lead of the tenant gets: nothing rejected may have taken one. */
  const lastCode = async (tenant = t) =>
    Number(
      (await rows('select value from crm.company_sequences where company_id = $1 and entity = $2', [tenant.company.id, 'lead']))[0]
        ?.value ?? 0,
    );

  before(async () => {
    ({ stack, call, admin, db, t, other } = await openTenants());
    for (const [name, logo] of [
      ['Google Ads', 'https://cdn.example.test/google.png'],
      ['Partner Event', null],
      ['Trade Show', null],
    ] as const) {
      const res = await admin('POST', `/companies/${t.company.id}/lead-sources`, { name, logo });
      expect(res.status, res.text).to.equal(201);
      sources[name] = res.body;
    }
    sources.foreign = (await admin('POST', `/companies/${other.company.id}/lead-sources`, { name: 'Foreign' })).body;
    for (const [code, source, active] of [
      ['GADS-2026', 'Google Ads', true],
      ['OLD-PROMO', 'Trade Show', false],
    ] as const) {
      const res = await admin('POST', `/companies/${t.company.id}/trackers`, { code, lead_source_id: sources[source]!.id, active });
      expect(res.status, res.text).to.equal(201);
      trackers[code] = res.body;
    }
  });
  after(async () => {
    await db?.end();
    await stack?.stop();
  });

  describe('Marketing tracking object rules', () => {
    it('rule 1: trims values and ignores empty ones', async () => {
      const lead = await created({
        marketing: {
          utm_source: '  Newsletter  ',
          svc_campaign: '   ',
          utm_campaign: ' Spring ',
          gclid: '',
          fbclid: null,
          svc_creative: ' Banner A ',
        },
      });
      const m = (await detail(lead.id)).marketing_lead_source;
      expect(m.campaing_name).to.equal('Spring');
      expect(m.gclid).to.equal(null);
      expect(m.fbclid).to.equal(null);
      expect(m.creative).to.deep.equal({ id: null, value: 'Banner A', creative_uri: null });
      expect(m.lead_source.name).to.equal('Newsletter');
      const [row] = await acquisitionsOf(lead.id);
      expect(row).to.include({ utm_source: 'Newsletter', svc_source: 'Newsletter', svc_campaign: 'Spring', gclid: null });
    });

    it('rule 2: utm_* fill the matching svc_* when those are not sent; utm_term becomes utm_search_term', async () => {
      const lead = await created({
        marketing: {
          utm_campaign: 'utm-campaign',
          svc_campaign: 'svc-campaign',
          utm_ad_set: 'Set A',
          utm_content: 'Video 1',
          utm_display_on: 'Feed',
          utm_term: 'crm software',
        },
      });
      const m = (await detail(lead.id)).marketing_lead_source;
      expect(m).to.include({
        campaing_name: 'svc-campaign',
        ad_set_name: 'Set A',
        content_name: 'Video 1',
        displayed_on_name: 'Feed',
        utm_search_term: 'crm software',
      });
      const [row] = await acquisitionsOf(lead.id);
      expect(row).to.include({ utm_campaign: 'utm-campaign', utm_term: 'crm software', svc_displayed_on: 'Feed' });
      const explicit = await created({ marketing: { utm_term: 'crm', utm_search_term: 'best crm' } });
      expect((await detail(explicit.id)).marketing_lead_source.utm_search_term).to.equal('best crm');
    });

    it('rule 3: url_conversion fills the missing svc_*, utm_*, gclid and fbclid; values sent win', async () => {
      const url =
        'https://landing.example.test/offer?svc_campaign=from-url&svc_ad_set=url-set&svc_conversion_tool=Form%20A' +
        '&utm_source=url-source&utm_medium=cpc&utm_term=url+term&gclid=G-URL&fbclid=F-URL';
      const lead = await created({ marketing: { url_conversion: url, svc_campaign: 'sent-campaign', gclid: 'G-SENT' } });
      const m = (await detail(lead.id)).marketing_lead_source;
      expect(m).to.include({
        campaing_name: 'sent-campaign',
        ad_set_name: 'url-set',
        conversion_tool_name: 'Form A',
        utm_medium: 'cpc',
        utm_search_term: 'url term',
        gclid: 'G-SENT',
        fbclid: 'F-URL',
        url_conversion: 'https://landing.example.test/offer',
        conversion_url_full: url,
      });
      expect(m.lead_source.name).to.equal('url-source');
      const [row] = await acquisitionsOf(lead.id);
      expect(row).to.include({ utm_source: 'url-source', svc_source: 'url-source', utm_term: 'url term' });
    });

    it("rule 3: the URL's svc_code is matched against the trackers too", async () => {
      const lead = await created({ marketing: { url_conversion: 'https://landing.example.test/?svc_code=GADS-2026' } });
      expect((await detail(lead.id)).lead_source).to.deep.equal(sources['Google Ads']);
      expect((await acquisitionsOf(lead.id))[0].tracker_id).to.equal(trackers['GADS-2026']!.id);
    });

    it('rule 4: the consent parameter of the URL is the decision when the body has none', async () => {
      const lead = await created({ marketing: { url_conversion: 'https://landing.example.test/?measurement_consent=DENIED' } });
      expect(lead.measurement_consent).to.equal('DENIED');
      const d = await detail(lead.id);
      expect(d.measurement_consent).to.equal('DENIED');
      expect(d.marketing_lead_source.measurement_consent).to.equal('DENIED');
      expect((await leadRow(lead.id)).measurement_consent).to.equal('DENIED');
    });

    it('rule 4: an unknown value, divergent repeats or a malformed URL give UNSPECIFIED', async () => {
      for (const url of [
        'https://landing.example.test/?measurement_consent=maybe',
        'https://landing.example.test/?measurement_consent=GRANTED&measurement_consent=DENIED',
        'landing.example.test/no-scheme?measurement_consent=GRANTED',
        'https://exa mple.test/?utm_source=x',
      ]) {
        const lead = await created({ marketing: { url_conversion: url } });
        expect(lead.measurement_consent, url).to.equal('UNSPECIFIED');
        expect((await detail(lead.id)).marketing_lead_source.measurement_consent, url).to.equal('UNSPECIFIED');
      }
    });

    it('rule 4: equal repeats and agreeing body values are one decision', async () => {
      const lead = await created({
        measurement_consent: 'DENIED',
        marketing: {
          measurement_consent: 'DENIED',
          url_conversion: 'https://landing.example.test/?measurement_consent=DENIED&measurement_consent=denied',
        },
      });
      expect(lead.measurement_consent).to.equal('DENIED');
    });

    describe('rule 4 (and POST /leads rule 3): a divergence is a 400 naming the field, with nothing created', () => {
      const divergent: [string, Record<string, unknown>, string][] = [
        [
          'the top-level value and the alias',
          { measurement_consent: 'GRANTED', marketing: { measurement_consent: 'DENIED' } },
          'marketing.measurement_consent',
        ],
        [
          'the top-level value and the URL',
          { measurement_consent: 'GRANTED', marketing: { url_conversion: 'https://l.example.test/?measurement_consent=DENIED' } },
          'marketing.url_conversion',
        ],
        [
          'the alias and the URL',
          { marketing: { measurement_consent: 'UNSPECIFIED', url_conversion: 'https://l.example.test/?measurement_consent=GRANTED' } },
          'marketing.url_conversion',
        ],
        [
          'the top-level value and an unreadable URL (UNSPECIFIED)',
          { measurement_consent: 'DENIED', marketing: { url_conversion: 'https://l.example.test/?measurement_consent=nope' } },
          'marketing.url_conversion',
        ],
      ];
      for (const [what, body, field] of divergent) {
        it(`between ${what}`, async () => {
          const before = await lastCode();
          const sourceName = `Divergent ${field} ${Math.random()}`;
          const marketing = { ...(body.marketing as object), svc_source: sourceName, svc_code: 'GADS-2026' };
          const res = await create({ title: 'Divergent', ...body, marketing });
          expect(res.status, res.text).to.equal(400);
          expect(res.body.error).to.equal('Bad Request');
          expect(res.body.message).to.match(new RegExp(`^${field.replace('.', '\\.')}: `));
          expect(await lastCode(), 'no code taken').to.equal(before);
          expect(await sourcesNamed(t.company.id, sourceName), 'no lead source created').to.deep.equal([]);
        });
      }
      it('the next accepted lead takes the next code', async () => {
        const before = await lastCode();
        expect((await created({})).code).to.equal(before + 1);
      });
    });

    it('rule 5: without GRANTED the obref parameter and the fragment are dropped from the full URL', async () => {
      const url = 'https://landing.example.test/p?utm_source=mail&obref=tok-123&q=a%20b#section';
      const denied = await created({ measurement_consent: 'DENIED', marketing: { url_conversion: url } });
      expect((await detail(denied.id)).marketing_lead_source).to.include({
        conversion_url_full: 'https://landing.example.test/p?utm_source=mail&q=a%20b',
        url_conversion: 'https://landing.example.test/p',
      });
      const unspecified = await created({ measurement_consent: 'UNSPECIFIED', marketing: { url_conversion: url } });
      expect((await detail(unspecified.id)).marketing_lead_source.conversion_url_full).to.equal(
        'https://landing.example.test/p?utm_source=mail&q=a%20b',
      );
      const stored = await rows('select conversion_url_full from crm.marketing_acquisitions where lead_id = any($1)', [
        [denied.id, unspecified.id],
      ]);
      for (const r of stored) expect(r.conversion_url_full).to.not.match(/obref|#/);
    });

    it('rule 5: with GRANTED (sent or by default) the full URL is kept', async () => {
      const url = 'https://landing.example.test/p?obref=tok-123#section';
      for (const body of [{ measurement_consent: 'GRANTED' }, {}]) {
        const lead = await created({ ...body, marketing: { url_conversion: url } });
        expect((await detail(lead.id)).marketing_lead_source.conversion_url_full).to.equal(url);
      }
    });

    it('rule 6: a lone consent alias, an empty object, only null or blank fields make no snapshot', async () => {
      const alias = await created({ marketing: { measurement_consent: 'DENIED' } });
      expect(alias.measurement_consent).to.equal('DENIED');
      for (const marketing of [
        {},
        { utm_source: null, gclid: null },
        { svc_source: '   ', url_conversion: '', measurement_consent: '' },
        null,
      ]) {
        const lead = await created({ marketing });
        expect(lead.measurement_consent, JSON.stringify(marketing)).to.equal('GRANTED');
      }
      const ids = (await rows('select id from crm.leads where company_id = $1 and code >= $2', [t.company.id, alias.code])).map(
        (r) => r.id,
      );
      expect(ids).to.have.length(5);
      expect(await rows('select id from crm.marketing_acquisitions where lead_id = any($1)', [ids])).to.deep.equal([]);
      const d = await detail(alias.id);
      expect(d.marketing_lead_source).to.equal(null);
      expect(d.lead_source).to.equal(null);
    });

    it('rule 7: on update the fields sent correct the current acquisition; omitted are kept, null clears', async () => {
      const lead = await created({ marketing: { utm_source: 'Newsletter', utm_campaign: 'Spring', gclid: 'G-1', svc_creative: 'Banner' } });
      const [original] = await acquisitionsOf(lead.id);
      const put = (marketing: unknown) =>
        call('PUT', `/integrations/external/leads/${lead.id}`, { token: t.key.key, body: { title: 'Marketing lead', marketing } });
      const res = await put({ utm_campaign: 'Summer', gclid: null, svc_creative: '  ' });
      expect(res.status, res.text).to.equal(200);
      const after = await acquisitionsOf(lead.id);
      expect(after).to.have.length(1);
      expect(after[0]).to.include({
        id: original.id,
        utm_source: 'Newsletter',
        svc_source: 'Newsletter',
        utm_campaign: 'Summer',
        svc_campaign: 'Summer',
        gclid: null,
        svc_creative: null,
      });
      const m = (await detail(lead.id)).marketing_lead_source;
      expect(m).to.include({ id: original.id, campaing_name: 'Summer', gclid: null });
      expect(m.lead_source.name).to.equal('Newsletter');
    });

    it('rule 7: a correction reads the URL for what is missing, and its consent diverging from the alias is a 400', async () => {
      const lead = await created({ marketing: { svc_campaign: 'Kept' } });
      const put = (marketing: unknown) =>
        call('PUT', `/integrations/external/leads/${lead.id}`, { token: t.key.key, body: { title: 'Marketing lead', marketing } });
      const divergent = await put({ url_conversion: 'https://l.example.test/?measurement_consent=DENIED', measurement_consent: 'GRANTED' });
      expect(divergent.status, divergent.text).to.equal(400);
      expect(divergent.body.message).to.contain('marketing.url_conversion');
      expect((await acquisitionsOf(lead.id))[0]).to.include({ url_conversion: null, measurement_consent: null });
      const ok = await put({
        url_conversion: 'https://l.example.test/p?svc_campaign=url&utm_content=C1&obref=x&measurement_consent=DENIED#frag',
      });
      expect(ok.status, ok.text).to.equal(200);
      const [row] = await acquisitionsOf(lead.id);
      expect(row).to.include({
        svc_campaign: 'Kept',
        svc_content: 'C1',
        url_conversion: 'https://l.example.test/p',
        conversion_url_full: 'https://l.example.test/p?svc_campaign=url&utm_content=C1&measurement_consent=DENIED',
        measurement_consent: 'DENIED',
      });
      expect((await detail(lead.id)).measurement_consent).to.equal('DENIED');
    });

    it('rule 7: a lead without an acquisition gets one from a correction that is an acquisition (rule 6 otherwise)', async () => {
      const lead = await created({});
      const put = (marketing: unknown) =>
        call('PUT', `/integrations/external/leads/${lead.id}`, { token: t.key.key, body: { title: 'Marketing lead', marketing } });
      expect((await put({ gclid: '  ', measurement_consent: 'GRANTED' })).status).to.equal(200);
      expect(await acquisitionsOf(lead.id)).to.have.length(0);
      expect((await put({ svc_code: 'GADS-2026' })).status).to.equal(200);
      const [row] = await acquisitionsOf(lead.id);
      expect(row).to.include({ svc_code: 'GADS-2026', lead_source_id: sources['Google Ads']!.id });
      expect((await detail(lead.id)).lead_source.id).to.equal(sources['Google Ads']!.id);
    });

    it('caps lengths with a 400 naming the field', async () => {
      const before = await lastCode();
      for (const [marketing, field] of [
        [{ url_conversion: `https://landing.example.test/?q=${'x'.repeat(5000)}` }, 'marketing.url_conversion'],
        [{ svc_source: 's'.repeat(201) }, 'marketing.svc_source'],
        [{ utm_content: 'c'.repeat(256) }, 'marketing.utm_content'],
        [{ fbclid: 'f'.repeat(501) }, 'marketing.fbclid'],
        [{ utm_medium: 'cpc' }, 'utm_medium'],
        [{ measurement_consent: 'granted' }, 'marketing.measurement_consent'],
      ] as const) {
        const res = await create({ title: 'Too long', marketing });
        expect(res.status, field).to.equal(400);
        expect(res.body.message, field).to.contain(field);
      }
      expect(await lastCode()).to.equal(before);
    });
  });

  describe('origin resolution (POST /leads rule 2)', () => {
    it('crm_lead_source_id is the manual origin, stored on the lead', async () => {
      const lead = await created({ crm_lead_source_id: sources['Partner Event']!.id });
      const d = await detail(lead.id);
      expect(d.lead_source).to.deep.equal(sources['Partner Event']);
      expect(d.marketing_lead_source).to.equal(null);
      expect((await leadRow(lead.id)).lead_source_id).to.equal(sources['Partner Event']!.id);
    });

    it('crm_lead_source_id of another company, unknown or malformed is a 400 naming it, nothing created', async () => {
      const before = await lastCode();
      for (const id of [sources.foreign!.id, '00000000-0000-7000-8000-000000000000', 'nope']) {
        const res = await create({ title: 'x', crm_lead_source_id: id, marketing: { utm_source: 'Would be created' } });
        expect(res.status, id).to.equal(400);
        expect(res.body.message, id).to.contain('crm_lead_source_id');
      }
      expect(await lastCode()).to.equal(before);
      expect(await sourcesNamed(t.company.id, 'Would be created')).to.deep.equal([]);
    });

    it("an active tracker's svc_code gives the tracker's origin", async () => {
      const lead = await created({ marketing: { svc_code: 'GADS-2026', svc_source: 'Ignored Source' } });
      const d = await detail(lead.id);
      expect(d.lead_source).to.deep.equal(sources['Google Ads']);
      expect(d.marketing_lead_source.lead_source).to.deep.equal(sources['Google Ads']);
      const [acq] = await acquisitionsOf(lead.id);
      expect(acq).to.include({ tracker_id: trackers['GADS-2026']!.id, lead_source_id: sources['Google Ads']!.id, svc_code: 'GADS-2026' });
      expect((await leadRow(lead.id)).lead_source_id).to.equal(sources['Google Ads']!.id);
      expect(await sourcesNamed(t.company.id, 'Ignored Source')).to.deep.equal([]);
    });

    it('with both, the tracker stays linked to the acquisition and the lead uses crm_lead_source_id', async () => {
      const lead = await created({ crm_lead_source_id: sources['Partner Event']!.id, marketing: { svc_code: 'GADS-2026' } });
      const d = await detail(lead.id);
      expect(d.lead_source).to.deep.equal(sources['Partner Event']);
      const [acq] = await acquisitionsOf(lead.id);
      expect(acq.tracker_id).to.equal(trackers['GADS-2026']!.id);
      expect(acq.lead_source_id).to.equal(sources['Partner Event']!.id);
      expect((await leadRow(lead.id)).lead_source_id).to.equal(sources['Partner Event']!.id);
    });

    it('an inactive or unknown tracker code falls back to the source name, and links no tracker', async () => {
      for (const code of ['OLD-PROMO', 'NO-SUCH-CODE']) {
        const lead = await created({ marketing: { svc_code: code, utm_source: 'google ads' } });
        expect((await detail(lead.id)).lead_source, code).to.deep.equal(sources['Google Ads']);
        const [acq] = await acquisitionsOf(lead.id);
        expect(acq).to.include({ tracker_id: null, svc_code: code });
      }
      expect(await sourcesNamed(t.company.id, 'Google Ads')).to.have.length(1);
    });

    it("another company's tracker code is not a tracker of this one", async () => {
      const lead = await created({ marketing: { svc_code: 'GADS-2026' } }, other);
      expect((await get(lead.id, other)).body.lead_source).to.equal(null);
    });

    it('svc_source has priority over utm_source; names match without letter case; a new name creates the origin once', async () => {
      const a = await created({ marketing: { svc_source: 'Trade SHOW', utm_source: 'Google Ads' } });
      expect((await detail(a.id)).lead_source).to.deep.equal(sources['Trade Show']);
      const b = await created({ marketing: { utm_source: 'Podcast 42' } });
      const podcast = (await detail(b.id)).lead_source;
      expect(podcast).to.include({ name: 'Podcast 42', logo: null });
      const c = await created({ marketing: { svc_source: 'PODCAST 42' } });
      expect((await detail(c.id)).lead_source).to.deep.equal(podcast);
      expect(await sourcesNamed(t.company.id, 'podcast 42')).to.have.length(1);
    });

    it('a source name with LIKE wildcards matches only itself', async () => {
      for (const name of ['%', 'Google_Ads']) {
        const lead = await created({ marketing: { utm_source: name } });
        expect((await detail(lead.id)).lead_source.name, name).to.equal(name);
      }
    });

    it('concurrent leads with one new source name create one origin', async () => {
      const name = `Webinar ${Date.now()}`;
      const results = await Promise.all(Array.from({ length: 8 }, (_, i) => create({ title: `c${i}`, marketing: { utm_source: name } })));
      expect(results.map((r) => r.status)).to.deep.equal(Array(8).fill(201));
      expect(await sourcesNamed(t.company.id, name)).to.have.length(1);
    });

    it('IG in any letter case is the Instagram origin, found or created once', async () => {
      const ids: string[] = [];
      for (const source of ['IG', 'ig', 'iG', 'Instagram']) {
        const lead = await created({ marketing: { utm_source: source } });
        ids.push((await detail(lead.id)).lead_source.id);
      }
      expect(new Set(ids).size).to.equal(1);
      const instagram = await sourcesNamed(t.company.id, 'Instagram');
      expect(instagram).to.deep.equal([{ id: ids[0], name: 'Instagram' }]);
      expect(await sourcesNamed(t.company.id, 'IG')).to.deep.equal([]);
    });

    it('neither gives no origin', async () => {
      const lead = await created({ marketing: { utm_campaign: 'no source' } });
      const d = await detail(lead.id);
      expect(d.lead_source).to.equal(null);
      expect(d.marketing_lead_source.lead_source).to.equal(null);
      expect((await leadRow(lead.id)).lead_source_id).to.equal(null);
    });
  });

  describe('consent resolution (spec "Measurement consent")', () => {
    /** A lead as an older system left it: no canonical consent, acquisitions inserted one by one. */
    async function historicalLead(acquisitions: { consent: string | null; active: boolean; minutesAgo: number; source?: string }[]) {
      const lead = await created({ title: 'Historical' });
      await db.query('update crm.leads set measurement_consent = null where id = $1', [lead.id]);
      for (const a of acquisitions) {
        await db.query(
          `insert into crm.marketing_acquisitions (id, company_id, lead_id, active, created_at, measurement_consent, lead_source_id, svc_campaign)
           values (gen_random_uuid(), $1, $2, $3, now() - make_interval(mins => $4), $5, $6, $7)`,
          [t.company.id, lead.id, a.active, a.minutesAgo, a.consent, a.source ?? null, `c-${a.minutesAgo}`],
        );
      }
      return lead;
    }

    it('stores the top-level value, else GRANTED', async () => {
      expect((await created({ measurement_consent: 'UNSPECIFIED' })).measurement_consent).to.equal('UNSPECIFIED');
      const lead = await created({ marketing: { utm_source: 'Newsletter' } });
      expect(lead.measurement_consent).to.equal('GRANTED');
      expect((await leadRow(lead.id)).measurement_consent).to.equal('GRANTED');
      expect((await detail(lead.id)).marketing_lead_source.measurement_consent, 'the snapshot carries no decision').to.equal(null);
    });

    it('a historical lead uses the decision of its most recent active snapshot', async () => {
      const lead = await historicalLead([
        { consent: 'GRANTED', active: true, minutesAgo: 30 },
        { consent: 'DENIED', active: true, minutesAgo: 20 },
        { consent: 'GRANTED', active: false, minutesAgo: 10 },
      ]);
      const d = await detail(lead.id);
      expect(d.measurement_consent).to.equal('DENIED');
      expect(d.marketing_lead_source.campaing_name).to.equal('c-20');
    });

    it('a snapshot without a decision does not shadow an older one', async () => {
      const lead = await historicalLead([
        { consent: 'DENIED', active: true, minutesAgo: 30 },
        { consent: null, active: true, minutesAgo: 5 },
      ]);
      const d = await detail(lead.id);
      expect(d.measurement_consent).to.equal('DENIED');
      expect(d.marketing_lead_source.campaing_name, 'the snapshot shown is still the latest').to.equal('c-5');
      expect(d.marketing_lead_source.measurement_consent).to.equal(null);
    });

    it('both absent is UNSPECIFIED, with no backfill', async () => {
      const bare = await historicalLead([]);
      const undecided = await historicalLead([{ consent: null, active: true, minutesAgo: 5 }]);
      const inactiveOnly = await historicalLead([{ consent: 'GRANTED', active: false, minutesAgo: 5 }]);
      for (const lead of [bare, undecided, inactiveOnly]) {
        expect((await detail(lead.id)).measurement_consent).to.equal('UNSPECIFIED');
        expect((await leadRow(lead.id)).measurement_consent, 'no backfill').to.equal(null);
      }
    });

    it('the canonical value wins over any snapshot', async () => {
      const lead = await created({ measurement_consent: 'GRANTED', marketing: { utm_source: 'Newsletter' } });
      await db.query(
        `insert into crm.marketing_acquisitions (id, company_id, lead_id, active, created_at, measurement_consent)
         values (gen_random_uuid(), $1, $2, true, now() + interval '1 minute', 'DENIED')`,
        [t.company.id, lead.id],
      );
      expect((await detail(lead.id)).measurement_consent).to.equal('GRANTED');
    });
  });

  describe('detail: lead_source and marketing_lead_source', () => {
    it('marketing_lead_source has exactly the contract fields, mapped from the snapshot', async () => {
      const url = 'https://landing.example.test/offer?utm_medium=social&fbclid=F-1&obref=r#x';
      const lead = await created({
        marketing: {
          svc_code: 'GADS-2026',
          svc_campaign: 'Black Friday',
          svc_ad_set: 'Lookalike 1%',
          svc_content: 'Carousel',
          svc_displayed_on: 'Stories',
          svc_conversion_tool: 'Landing form',
          svc_creative: 'creative-7',
          gclid: 'G-7',
          utm_search_term: 'crm',
          url_conversion: url,
        },
      });
      const d = await detail(lead.id);
      const [acq] = await acquisitionsOf(lead.id);
      expect(d.marketing_lead_source).to.deep.equal({
        id: acq.id,
        utm_search_term: 'crm',
        utm_medium: 'social',
        lead_source: sources['Google Ads'],
        url_conversion: 'https://landing.example.test/offer',
        campaing_name: 'Black Friday',
        ad_set_name: 'Lookalike 1%',
        content_name: 'Carousel',
        displayed_on_name: 'Stories',
        conversion_tool_name: 'Landing form',
        creative: { id: null, value: 'creative-7', creative_uri: null },
        source_url: null,
        headline: null,
        ad_body: null,
        media_type: null,
        ads_clid_id: null,
        gclid: 'G-7',
        fbclid: 'F-1',
        fbc: null,
        fbp: null,
        conversion_url_full: url,
        measurement_consent: null,
      });
      expect(d.lead_source).to.deep.equal({
        id: sources['Google Ads']!.id,
        name: 'Google Ads',
        logo: 'https://cdn.example.test/google.png',
      });
    });

    it("lead_source is the most recent acquisition's origin, otherwise the one stored on the lead", async () => {
      const lead = await created({ crm_lead_source_id: sources['Partner Event']!.id });
      const insert = (minutes: number, source: string | null) =>
        db.query(
          `insert into crm.marketing_acquisitions (id, company_id, lead_id, active, created_at, lead_source_id)
           values (gen_random_uuid(), $1, $2, true, now() + make_interval(mins => $3), $4)`,
          [t.company.id, lead.id, minutes, source],
        );
      await insert(1, sources['Trade Show']!.id);
      expect((await detail(lead.id)).lead_source).to.deep.equal(sources['Trade Show']);
      await insert(2, null);
      expect((await detail(lead.id)).lead_source, 'an acquisition without origin').to.deep.equal(sources['Partner Event']);
    });

    it('the lead.created event carries the same lead_source and marketing_lead_source', async () => {
      const lead = await created({
        measurement_consent: 'DENIED',
        marketing: { utm_source: 'IG', url_conversion: 'https://landing.example.test/?obref=1&utm_campaign=reels#f' },
      });
      const d = await detail(lead.id);
      const [event] = await rows(`select payload from crm.outbox where event_key = 'lead.created' and payload->'lead'->>'id' = $1`, [
        lead.id,
      ]);
      expect(event.payload.lead.lead_source).to.deep.equal(d.lead_source);
      expect(event.payload.lead.marketing_lead_source).to.deep.equal(d.marketing_lead_source);
      expect(event.payload.lead.measurement_consent).to.equal('DENIED');
      expect(d.marketing_lead_source).to.include({
        conversion_url_full: 'https://landing.example.test/?utm_campaign=reels',
        campaing_name: 'reels',
        measurement_consent: 'DENIED',
      });
      expect(d.lead_source.name).to.equal('Instagram');
    });
  });
});
