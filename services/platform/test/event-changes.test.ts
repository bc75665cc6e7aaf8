import { expect } from 'chai';
import { z } from 'zod';
import { changesBetween, changesSchema, withChanges } from '../src/events/changes.js';

/** `changes` of update events (decision 0178): computed from a record's snapshots before and after one change. */
describe('event changes', () => {
  const rules = { ignore: ['updated_at'], byId: { custom_fields: 'field_id' } };
  const field = (id: string, value: string) => ({ field_id: id, field_name: id.toUpperCase(), answers: [{ value }] });
  const before = {
    id: 'r1',
    title: 'Old',
    value: 10,
    updated_at: '2026-01-01T00:00:00.000Z',
    stage: { id: 's1', name: 'New' },
    tags: [{ id: 't1' }],
    custom_fields: [field('a', '1'), field('b', '2')],
    note: undefined,
  };

  it('reports each field that moved as {from, to}, custom fields per id, and nothing set to its current value', () => {
    const after = {
      ...before,
      title: 'New',
      value: 10,
      updated_at: '2026-01-02T00:00:00.000Z',
      stage: { id: 's1', name: 'New' },
      tags: [{ id: 't1' }],
      custom_fields: [field('a', '1'), field('b', '3'), field('c', '4')],
    };
    expect(changesBetween(before, after, rules)).to.deep.equal({
      title: { from: 'Old', to: 'New' },
      custom_fields: {
        b: { from: field('b', '2'), to: field('b', '3') },
        c: { from: null, to: field('c', '4') },
      },
    });
  });

  it('reports a removed custom field as to null, a nested object and a list whole, and undefined as absent', () => {
    const after = { ...before, stage: { id: 's2', name: 'Won' }, tags: [], custom_fields: [field('a', '1')], note: null };
    expect(changesBetween(before, after, rules)).to.deep.equal({
      stage: { from: { id: 's1', name: 'New' }, to: { id: 's2', name: 'Won' } },
      tags: { from: [{ id: 't1' }], to: [] },
      custom_fields: { b: { from: field('b', '2'), to: null } },
    });
  });

  it('adds the same changes to every event of the change, keeping the spec fields', () => {
    const events = withChanges(
      [
        { eventKey: 'lead.updated', payload: { ...before, title: 'New' } },
        { eventKey: 'lead.stage_changed', payload: { lead: before, previous_stage: null, current_stage: null } },
      ],
      before,
      { ...before, title: 'New' },
      rules,
    );
    const expected = { title: { from: 'Old', to: 'New' } };
    expect(events[0]!.payload).to.deep.equal({ ...before, title: 'New', changes: expected });
    expect(events[1]!.payload).to.deep.include({ previous_stage: null, changes: expected });
  });

  it('documents changes from the snapshot schema: each compared field optional in its own shape, per id for byId', () => {
    const snapshot = z.object({
      title: z.string(),
      updated_at: z.string(),
      custom_fields: z.array(z.object({ field_id: z.string(), answers: z.array(z.string()) })),
    });
    const schema = changesSchema(snapshot, rules, 'ThingChanges');
    expect(Object.keys(schema.shape)).to.have.members(['title', 'custom_fields']);
    expect(schema.safeParse({ title: { from: 'a', to: 'b' } }).success).to.equal(true);
    expect(schema.safeParse({ title: { from: 1, to: 'b' } }).success).to.equal(false);
    expect(
      schema.safeParse({ custom_fields: { f1: { from: null, to: { field_id: 'f1', answers: ['x'] } } } }).success,
      'an element added',
    ).to.equal(true);
  });
});
