export { type ProviderConfig, providerConfigShape } from './config.js';
export * from './provider.js';
export { createProviderRegistry } from './registry.js';
export { SANDBOX_TEMPLATES } from './sandbox.js';
export { type TemplateField, templateFieldsToComponents } from './template-fields.js';
export { type ProviderWebhookOptions, providerWebhooks, WEBHOOK_PATHS } from './webhook.js';
