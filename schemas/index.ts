export * from './codec.js';
export * from './url-messages.js';
export * from './page-messages.js';
export * from './outcome-messages.js';
export * from './exchange-messages.js';
export * from './job-messages.js';
export * from './revisit-messages.js';
export * from './url-batches.js';
