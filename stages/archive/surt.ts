// the key is shared with the CDXJ index, which the output adapters write too
export { surtKey } from '../../pipeline/surt.js';
