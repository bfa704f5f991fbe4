// The link scorer: for each extracted page, every link whose anchor text or URL names one of
// the topic's words is queued (through the crawl's scope, seen set and politeness), until the
// budget of queued URLs is spent. Each judged link is a row of `topic_links`, queued or not.
//
// The budget is counted by this process: several workers of the stage would each spend their
// own (give each a share, or bound the whole crawl with --max-pages as well).
import { defineStage, emit } from 'jetstream-crawler';

/** How well a link matches: 2 for the anchor text, 1 for the URL, per topic word found. */
export function scoreLink(link, words) {
  const anchor = link.anchor.toLowerCase();
  const url = link.url.toLowerCase();
  return words.reduce((score, w) => score + (anchor.includes(w) ? 2 : 0) + (url.includes(w) ? 1 : 0), 0);
}

export function topicScorer({ topic, budget = 100, name = 'topic-scorer' }) {
  const words = topic.toLowerCase().split(/[\s,]+/).filter(Boolean);
  if (words.length === 0) throw new Error('topicScorer: give a topic, e.g. { topic: "astronomy telescope" }');
  // URL -> the stream sequence of the message that queued it: a redelivered message queues its URLs again
  const queued = new Map();
  return defineStage({
    name,
    input: 'extracted',
    table: { name: 'topic_links', columns: { url: 'VARCHAR', anchor: 'VARCHAR', score: 'INTEGER', queued: 'BOOLEAN' } },
    handle({ message, seq }) {
      const rows = [];
      const urls = [];
      // the best links first, so a budget that runs out takes the likeliest ones
      const scored = message.links.map((link) => ({ link, score: scoreLink(link, words) })).sort((a, b) => b.score - a.score);
      for (const { link, score } of scored) {
        const take = score > 0 && (queued.get(link.url) === seq || (!queued.has(link.url) && queued.size < budget));
        if (take) {
          queued.set(link.url, seq);
          // a link that names the topic in its text goes before its host's other URLs
          urls.push({ url: link.url, anchor: link.anchor, priority: score >= 2 ? 'high' : 'normal' });
        }
        rows.push({ url: link.url, anchor: link.anchor, score, queued: take });
      }
      return emit({ rows, urls });
    },
  });
}

// `crawl run --stage-module ./scorer.js` takes this one: the topic and budget from the environment
export default topicScorer({ topic: process.env.TOPIC ?? 'astronomy', budget: Number(process.env.TOPIC_BUDGET ?? 100) });
