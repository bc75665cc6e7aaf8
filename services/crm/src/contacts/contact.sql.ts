// The sales core imports the contact statements under this name; removed when the sales core's stores land.
export { ContactSql, normalizedContact, type PersonRequest, type PersonWithContacts } from './contact.store.js';
