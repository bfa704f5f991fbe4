/**
 * A parse5 tree adapter identical to the default one except for text nodes: instead of
 * growing `value` with `+=` (which leaves a V8 cons-string with one node per word/space
 * run, expensive to flatten later), each text node keeps the flat runs the tokenizer
 * produced in `chunks`; `value` stays ''. Extraction reads the chunks directly.
 * The parse5 parser only writes text through insertText/insertTextBefore, so overriding
 * those two is sufficient.
 */
import { defaultTreeAdapter, type DefaultTreeAdapterMap, type DefaultTreeAdapterTypes, type TreeAdapter } from 'parse5';

export interface ChunkedTextNode extends DefaultTreeAdapterTypes.TextNode {
  chunks: string[];
}

function createChunkedText(text: string): ChunkedTextNode {
  return { nodeName: '#text', value: '', parentNode: null, chunks: [text] };
}

export const chunkedTextAdapter: TreeAdapter<DefaultTreeAdapterMap> = {
  ...defaultTreeAdapter,
  insertText(parentNode, text) {
    const children = parentNode.childNodes;
    const last = children[children.length - 1];
    if (last !== undefined && last.nodeName === '#text') {
      (last as ChunkedTextNode).chunks.push(text);
      return;
    }
    defaultTreeAdapter.appendChild(parentNode, createChunkedText(text));
  },
  insertTextBefore(parentNode, text, referenceNode) {
    const children = parentNode.childNodes;
    const refIndex =
      children[children.length - 1] === referenceNode ? children.length - 1 : children.indexOf(referenceNode);
    const prev = children[refIndex - 1];
    if (prev !== undefined && prev.nodeName === '#text') {
      (prev as ChunkedTextNode).chunks.push(text);
      return;
    }
    defaultTreeAdapter.insertBefore(parentNode, createChunkedText(text), referenceNode);
  },
};

/** The text of a node created by chunkedTextAdapter. */
export function textOf(node: DefaultTreeAdapterTypes.TextNode): string {
  const chunks = (node as Partial<ChunkedTextNode>).chunks;
  return chunks === undefined ? node.value : chunks.length === 1 ? chunks[0]! : chunks.join('');
}
