import { Migration } from '@mikro-orm/migrations';

export class Migration20261125123851_chat extends Migration {
  override name = 'Migration20261125123851_chat';

  override up(): void | Promise<void> {
    this.addSql(
      `create table "chat"."agents" ("id" uuid not null, "company_id" uuid not null, "user_id" uuid not null, "status" varchar(20) not null, "whatsapp_number_ids" uuid[] not null, "instagram_account_ids" uuid[] not null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`alter table "chat"."agents" add constraint "agents_company_user_unique" unique ("company_id", "user_id");`);

    this.addSql(
      `create table "chat"."chats" ("id" uuid not null, "company_id" uuid not null, "channel_type" varchar(20) not null, "chat_type" varchar(20) not null, "channel_account_id" uuid not null, "wa_contact_id" varchar(50) null, "contact_name" varchar(200) null, "contact_number" varchar(50) null, "remote_profile_name" varchar(200) null, "external_contact_id" varchar(100) null, "external_contact_handle" varchar(100) null, "external_contact_display_name" varchar(200) null, "external_contact_avatar_url" text null, "person_id" uuid null, "status" varchar(20) not null, "priority" smallint not null, "unread_count" int not null, "is_manually_unread" boolean not null, "archived_at" timestamptz null, "last_customer_msg_at" timestamptz null, "last_message_id" uuid null, "last_activity_at" timestamptz not null, "assigned_agent_id" uuid null, "started_by" varchar(10) null, "trailing_outbound_count" int not null, "ai_agent_id" uuid null, "ai_message_count" int not null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "chats_company_activity_idx" on "chat"."chats" ("company_id", "last_activity_at", "id");`);
    this.addSql(`create index "chats_company_person_idx" on "chat"."chats" ("company_id", "person_id") where person_id is not null;`);
    this.addSql(
      `alter table "chat"."chats" add constraint "chats_whatsapp_contact_unique" unique ("channel_account_id", "wa_contact_id");`,
    );
    this.addSql(
      `alter table "chat"."chats" add constraint "chats_instagram_contact_unique" unique ("channel_account_id", "external_contact_id");`,
    );

    this.addSql(
      `create table "chat"."chat_participants" ("chat_id" uuid not null, "agent_id" uuid not null, "company_id" uuid not null, "created_at" timestamptz not null, primary key ("chat_id", "agent_id"));`,
    );

    this.addSql(
      `create table "chat"."copilot_actions" ("id" uuid not null, "company_id" uuid not null, "chat_id" uuid not null, "execution_id" uuid null, "agent_id" uuid null, "agent_name" varchar(200) null, "action_key" varchar(100) not null, "status" varchar(30) not null, "confidence" double precision null, "requires_review" boolean not null, "input_payload" jsonb null, "output_payload" jsonb null, "failure_reason" text null, "created_at" timestamptz not null, "updated_at" timestamptz not null, "executed_at" timestamptz null, primary key ("id"));`,
    );
    this.addSql(`create index "copilot_actions_chat_id_index" on "chat"."copilot_actions" ("chat_id");`);

    this.addSql(
      `create table "chat"."flow_sessions" ("id" uuid not null, "company_id" uuid not null, "chat_id" uuid not null, "flow_id" uuid not null, "flow_name" varchar(200) not null, "status" varchar(20) not null, "started_at" timestamptz not null, "last_activity_at" timestamptz not null, "finished_at" timestamptz null, "current_step" jsonb null, primary key ("id"));`,
    );
    this.addSql(`create index "flow_sessions_chat_id_index" on "chat"."flow_sessions" ("chat_id");`);

    this.addSql(
      `create table "chat"."instagram_accounts" ("id" uuid not null, "company_id" uuid not null, "handle" varchar(100) not null, "display_name" varchar(200) not null, "external_account_id" varchar(100) not null, "provider" varchar(30) not null, "provider_status" varchar(30) not null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "instagram_accounts_company_id_index" on "chat"."instagram_accounts" ("company_id");`);
    this.addSql(
      `alter table "chat"."instagram_accounts" add constraint "instagram_accounts_external_account_id_unique" unique ("external_account_id");`,
    );

    this.addSql(
      `create table "chat"."messages" ("id" uuid not null, "company_id" uuid not null, "chat_id" uuid not null, "wamid" varchar(200) null, "ref_wamid" varchar(200) null, "type" varchar(30) not null, "origin" varchar(20) not null, "from_me" boolean not null, "sent_via" varchar(20) not null, "status" varchar(20) not null, "body_text" text null, "transcription" text null, "content_payload" jsonb null, "media" jsonb null, "quoted_message_id" uuid null, "agent_id" uuid null, "user_id" uuid null, "whatsapp_ai_agent_id" uuid null, "error_code" int null, "error_message" text null, "is_history" boolean not null, "is_forwarded" boolean not null, "meta_timestamp" timestamptz null, "deleted_at" timestamptz null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "messages_chat_order_idx" on "chat"."messages" ("chat_id", "created_at", "id");`);
    this.addSql(`create index "messages_wamid_idx" on "chat"."messages" ("wamid") where wamid is not null;`);
    this.addSql(`alter table "chat"."messages" add constraint "messages_chat_wamid_unique" unique ("chat_id", "wamid");`);

    this.addSql(
      `create table "chat"."message_reactions" ("id" uuid not null, "company_id" uuid not null, "message_id" uuid not null, "emoji" varchar(20) not null, "actor" varchar(20) not null, "reactor_wa_id" varchar(50) null, "reactor_user_id" uuid null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "message_reactions_message_id_index" on "chat"."message_reactions" ("message_id");`);

    this.addSql(
      `create table "chat"."message_templates" ("id" uuid not null, "company_id" uuid not null, "whatsapp_number_id" uuid not null, "name" varchar(200) not null, "language" varchar(20) not null, "category" varchar(20) not null, "status" varchar(20) not null, "components" jsonb not null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "message_templates_company_number_idx" on "chat"."message_templates" ("company_id", "whatsapp_number_id");`);
    this.addSql(
      `alter table "chat"."message_templates" add constraint "message_templates_number_name_language_unique" unique ("whatsapp_number_id", "name", "language");`,
    );

    this.addSql(
      `create table "chat"."scheduled_messages" ("id" uuid not null, "company_id" uuid not null, "chat_id" uuid not null, "status" varchar(20) not null, "message_kind" varchar(20) not null, "cancel_reason" varchar(40) null, "cancel_reason_description" text null, "failure_reason" text null, "cancel_on_inbound" boolean not null, "scheduled_at" timestamptz not null, "processed_at" timestamptz null, "sent_at" timestamptz null, "canceled_at" timestamptz null, "created_by_user_id" uuid null, "sender_agent_id" uuid null, "canceled_by_user_id" uuid null, "payload" jsonb not null, "attachments" jsonb not null, "sent_message_ids" uuid[] not null, "whatsapp_ai_agent_id" uuid null, "created_at" timestamptz not null, "updated_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "scheduled_messages_chat_id_index" on "chat"."scheduled_messages" ("chat_id");`);
    this.addSql(`create index "scheduled_messages_due_idx" on "chat"."scheduled_messages" ("scheduled_at") where status = 'PENDING';`);

    this.addSql(
      `create table "chat"."whatsapp_numbers" ("id" uuid not null, "company_id" uuid not null, "display_number" varchar(50) not null, "raw_number" varchar(30) not null, "phone_number_id" varchar(100) not null, "verified_name" varchar(200) null, "provider" varchar(30) not null, "business_account_id" varchar(100) null, "provider_status" varchar(30) not null, "created_at" timestamptz not null, primary key ("id"));`,
    );
    this.addSql(`create index "whatsapp_numbers_company_id_index" on "chat"."whatsapp_numbers" ("company_id");`);
    this.addSql(
      `alter table "chat"."whatsapp_numbers" add constraint "whatsapp_numbers_phone_number_id_unique" unique ("phone_number_id");`,
    );
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "chat"."agents" cascade;`);
    this.addSql(`drop table if exists "chat"."chats" cascade;`);
    this.addSql(`drop table if exists "chat"."chat_participants" cascade;`);
    this.addSql(`drop table if exists "chat"."copilot_actions" cascade;`);
    this.addSql(`drop table if exists "chat"."flow_sessions" cascade;`);
    this.addSql(`drop table if exists "chat"."instagram_accounts" cascade;`);
    this.addSql(`drop table if exists "chat"."messages" cascade;`);
    this.addSql(`drop table if exists "chat"."message_reactions" cascade;`);
    this.addSql(`drop table if exists "chat"."message_templates" cascade;`);
    this.addSql(`drop table if exists "chat"."scheduled_messages" cascade;`);
    this.addSql(`drop table if exists "chat"."whatsapp_numbers" cascade;`);
  }
}
