import { decodeAdmitted, type AdmittedUrl } from '../../schemas/index.js';
import type { StageDefinition } from '../../pipeline/stage.js';
import { handleGate } from './handle.js';
import { gateEmits, gateInput } from './spec.js';

export const politenessGateStage: StageDefinition<AdmittedUrl> = {
  name: 'politeness-gate',
  input: gateInput,
  emits: gateEmits,
  defaultConcurrency: 64,
  decode: (_subject, data) => decodeAdmitted(data),
  handle: handleGate,
};
