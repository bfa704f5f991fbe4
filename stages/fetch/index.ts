import { decodeGrant, type FetchGrant } from '../../schemas/index.js';
import type { ConsumerStage } from '../../pipeline/stage.js';
import { handleFetch } from './handle.js';
import { fetchEmits, fetchInput } from './spec.js';

export const fetchStage: ConsumerStage<FetchGrant> = {
  name: 'fetch',
  input: fetchInput,
  emits: fetchEmits,
  defaultConcurrency: 64,
  counts: ['responses', 'bytes', 'errors', 'retries', 'redirects', 'grants', 'bodies_not_downloaded', 'bytes_not_downloaded', 'address_fallbacks', 'bodies', 'hostq_removed'],
  decode: (_subject, data) => decodeGrant(data),
  handle: handleFetch,
};
