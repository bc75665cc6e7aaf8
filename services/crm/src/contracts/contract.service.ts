import { inTransaction } from '@svc/platform/db/native';
import { conflict, invalidField, notFound } from '@svc/platform/errors';
import { withChanges } from '@svc/platform/events/changes';
import type { NewEvent } from '@svc/platform/events/payloads';
import type { OutboxWriter } from '@svc/platform/events/writer';
import type { PoolClient } from 'pg';
import { v7 as uuidv7 } from 'uuid';
import type { z } from 'zod';
import { requireCompany } from '../companies/company.service.js';
import type { PoolOf } from '../db.js';
import { checkDeliveryLink } from '../deliveries/delivery.links.js';
import { actingUser, checkLinks, nextCode, refWhere, responsibleUser } from '../records/record.links.js';
import { type UserSummary, userSummary } from '../sales/sales.summaries.js';
import { type Contract, ContractStatus } from './contract.entity.js';
import type {
  CreateContractBody,
  cancelContractBody,
  completeContractBody,
  renewContractBody,
  UpdateContractBody,
} from './contract.schema.js';
import { CONTRACT_CHANGE_RULES, type ContractSnapshot, contractSnapshot, day } from './contract.snapshot.js';
import * as store from './contract.store.js';

type Action = 'change' | 'cancel' | 'renew' | 'complete';

/** Decision 0081: a completed contract can only be renewed, a canceled one is final. */
const ALLOWED: Record<number, Action[]> = {
  [ContractStatus.ACTIVE]: ['change', 'cancel', 'renew', 'complete'],
  [ContractStatus.COMPLETED]: ['renew'],
  [ContractStatus.CANCELED]: [],
};
const STATUS_NAME: Record<number, string> = { 1: 'active', 2: 'canceled', 3: 'completed' };
const VERB: Record<Action, string> = { change: 'changed', cancel: 'canceled', renew: 'renewed', complete: 'completed' };

const CHANGEABLE = {
  title: 'title',
  description: 'description',
  value: 'value',
  startDate: 'start_date',
  endDate: 'end_date',
  responsibleId: 'responsible_id',
  dealId: 'deal_id',
  deliveryId: 'delivery_id',
  organizationId: 'organization_id',
  personId: 'person_id',
} as const;
type Changeable = keyof typeof CHANGEABLE;
const same = (a: unknown, b: unknown) =>
  a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : (a ?? null) === (b ?? null);
const dateOf = (d: string) => new Date(`${d}T00:00:00.000Z`);

/** Decision 0081: each action writes the contract and its events in one transaction. */
export class Contracts {
  constructor(
    private readonly pool: PoolOf,
    private readonly outbox: OutboxWriter,
  ) {}

  async get(companyId: string, ref: string): Promise<ContractSnapshot> {
    const pool = await this.pool();
    await requireCompany(pool, companyId);
    const c = await store.findContract(pool, refWhere(companyId, ref, 'Contract'));
    if (!c) throw notFound('Contract');
    return contractSnapshot(pool, c);
  }

  async create(companyId: string, body: CreateContractBody): Promise<ContractSnapshot> {
    const pool = await this.pool();
    await requireCompany(pool, companyId);
    const by = await actingUser(pool, companyId, body.user_id);
    if (body.responsible_id) await responsibleUser(pool, companyId, body.responsible_id);
    await checkLinks(pool, companyId, body);
    await checkDeliveryLink(pool, companyId, body.delivery_id);
    const startDate = dateOf(body.start_date);
    const endDate = body.end_date ? dateOf(body.end_date) : null;
    checkPeriod(startDate, endDate);
    return inTransaction(pool, async (tx) => {
      const now = new Date();
      const contract: Contract = {
        id: uuidv7(),
        companyId,
        code: await nextCode(tx, companyId, 'contract'),
        title: body.title,
        description: body.description ?? null,
        status: ContractStatus.ACTIVE,
        value: body.value ?? null,
        startDate,
        endDate,
        dealId: body.deal_id ?? null,
        deliveryId: body.delivery_id ?? null,
        organizationId: body.organization_id ?? null,
        personId: body.person_id ?? null,
        responsibleId: body.responsible_id ?? by.id,
        createdById: by.id,
        renewalCount: 0,
        lastRenewedAt: null,
        canceledAt: null,
        canceledById: null,
        cancellationReason: null,
        completedAt: null,
        completedById: null,
        createdAt: now,
        updatedAt: now,
      };
      await store.insertContract(tx, contract);
      const snapshot = await contractSnapshot(tx, contract);
      await this.outbox.write(tx, [
        { companyId, eventKey: 'contract.created', payload: { contract: snapshot, created_by: userSummary(by) } },
      ]);
      return snapshot;
    });
  }

  /** PATCH (active contracts only): `contract.updated` `{contract, updated_by, changed_fields}` when something changed. */
  async update(companyId: string, ref: string, body: UpdateContractBody): Promise<ContractSnapshot> {
    const pool = await this.pool();
    await requireCompany(pool, companyId);
    const by = await actingUser(pool, companyId, body.user_id);
    if (body.responsible_id) await responsibleUser(pool, companyId, body.responsible_id);
    if (body.responsible_id === null) throw invalidField('responsible_id', 'a contract always has a responsible user');
    await checkLinks(pool, companyId, body);
    await checkDeliveryLink(pool, companyId, body.delivery_id);
    return this.act(companyId, ref, 'change', by, async (_tx, c) => {
      if (body.title !== undefined) c.title = body.title;
      if (body.description !== undefined) c.description = body.description;
      if (body.value !== undefined) c.value = body.value;
      if (body.start_date !== undefined) c.startDate = dateOf(body.start_date);
      if (body.end_date !== undefined) c.endDate = body.end_date === null ? null : dateOf(body.end_date);
      if (body.responsible_id) c.responsibleId = body.responsible_id;
      if (body.deal_id !== undefined) c.dealId = body.deal_id;
      if (body.delivery_id !== undefined) c.deliveryId = body.delivery_id;
      if (body.organization_id !== undefined) c.organizationId = body.organization_id;
      if (body.person_id !== undefined) c.personId = body.person_id;
      checkPeriod(c.startDate, c.endDate ?? null);
      return null;
    });
  }

  /** `contract.canceled` `{contract, canceled_by, canceled_at, cancellation_reason}`; final. */
  async cancel(companyId: string, ref: string, body: z.infer<typeof cancelContractBody>): Promise<ContractSnapshot> {
    const pool = await this.pool();
    await requireCompany(pool, companyId);
    const by = await actingUser(pool, companyId, body.user_id);
    return this.act(companyId, ref, 'cancel', by, async (_tx, c, now) => {
      c.status = ContractStatus.CANCELED;
      c.canceledAt = now;
      c.canceledById = by.id;
      c.cancellationReason = body.reason ?? null;
      return (contract) => ({
        eventKey: 'contract.canceled',
        payload: {
          contract,
          canceled_by: userSummary(by),
          canceled_at: contract.canceled_at,
          cancellation_reason: contract.cancellation_reason,
        },
      });
    });
  }

  /** A completed contract becomes active again. */
  async renew(companyId: string, ref: string, body: z.infer<typeof renewContractBody>): Promise<ContractSnapshot> {
    const pool = await this.pool();
    await requireCompany(pool, companyId);
    const by = await actingUser(pool, companyId, body.user_id);
    const newEnd = dateOf(body.end_date);
    return this.act(companyId, ref, 'renew', by, async (tx, c, now) => {
      if (!c.endDate) throw conflict('The contract has no end date: an open-ended contract has nothing to renew');
      if (newEnd <= c.endDate) throw invalidField('end_date', `must be after the contract's current end date (${day(c.endDate)})`);
      const previous = { endDate: c.endDate, value: c.value ?? null };
      await store.insertRenewal(tx, {
        id: uuidv7(),
        companyId,
        contractId: c.id,
        renewedAt: now,
        renewedById: by.id,
        previousEndDate: previous.endDate,
        newEndDate: newEnd,
        previousValue: previous.value,
        newValue: body.value === undefined ? previous.value : body.value,
      });
      c.endDate = newEnd;
      if (body.value !== undefined) c.value = body.value;
      c.status = ContractStatus.ACTIVE;
      c.completedAt = null;
      c.completedById = null;
      c.renewalCount += 1;
      c.lastRenewedAt = now;
      return (contract) => ({
        eventKey: 'contract.renewed',
        payload: {
          contract,
          renewed_by: userSummary(by),
          renewed_at: contract.last_renewed_at,
          previous_end_date: day(previous.endDate),
          new_end_date: contract.end_date,
          previous_value: previous.value,
          new_value: contract.value,
          renewal_count: contract.renewal_count,
        },
      });
    });
  }

  async complete(companyId: string, ref: string, body: z.infer<typeof completeContractBody>): Promise<ContractSnapshot> {
    const pool = await this.pool();
    await requireCompany(pool, companyId);
    const by = await actingUser(pool, companyId, body.user_id);
    return this.act(companyId, ref, 'complete', by, async (_tx, c, now) => {
      c.status = ContractStatus.COMPLETED;
      c.completedAt = now;
      c.completedById = by.id;
      return (contract) => ({
        eventKey: 'contract.completed',
        payload: { contract, completed_by: userSummary(by), completed_at: contract.completed_at },
      });
    });
  }

  /** 409 when the status forbids the action; nothing changed, nothing written (decision 0178). */
  private async act(
    companyId: string,
    ref: string,
    action: Action,
    by: { id: string; name: string; avatar?: string | null },
    change: (
      tx: PoolClient,
      c: Contract,
      now: Date,
    ) => Promise<((snapshot: ContractSnapshot) => NewEvent<'contract.canceled' | 'contract.renewed' | 'contract.completed'>) | null>,
  ): Promise<ContractSnapshot> {
    return inTransaction(await this.pool(), async (tx) => {
      const c = await store.findContract(tx, refWhere(companyId, ref, 'Contract'), true);
      if (!c) throw notFound('Contract');
      if (!ALLOWED[c.status]?.includes(action)) throw conflict(`The contract is ${STATUS_NAME[c.status]}: it cannot be ${VERB[action]}`);
      const before = Object.fromEntries(Object.keys(CHANGEABLE).map((k) => [k, c[k as Changeable]]));
      const statusBefore = c.status;
      const was = await contractSnapshot(tx, c);
      const now = new Date();
      const event = await change(tx, c, now);
      const changed: string[] = (Object.keys(CHANGEABLE) as Changeable[]).filter((k) => !same(before[k], c[k])).map((k) => CHANGEABLE[k]);
      if (c.status !== statusBefore) changed.push('status');
      if (!event && !changed.length) return contractSnapshot(tx, c);
      c.updatedAt = now;
      await store.updateContract(tx, c);
      const snapshot = await contractSnapshot(tx, c);
      const updatedBy: UserSummary = { id: by.id, name: by.name, avatar: by.avatar ?? null };
      const own = event?.(snapshot);
      const events = withChanges(
        [
          ...(own ? [own] : []),
          { eventKey: 'contract.updated', payload: { contract: snapshot, updated_by: updatedBy, changed_fields: changed } },
        ],
        was,
        snapshot,
        CONTRACT_CHANGE_RULES,
      );
      await this.outbox.write(
        tx,
        events.map((e) => ({ companyId, ...e })),
      );
      return snapshot;
    });
  }
}

function checkPeriod(start: Date, end: Date | null): void {
  if (end && end < start) throw invalidField('end_date', 'must not be before start_date');
}
