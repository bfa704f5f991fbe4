// Hosts of the test web for how a crawler reaches a server and what it downloads:
//
// - v6.net.test: served on the IPv6 loopback [::1] only (the test web listens there too).
// - fallback.net.test: two addresses; the first, 127.0.0.3, takes no connection at all (a
//   black hole: a socket whose accept queue is full, so the kernel drops every SYN, as a dead
//   server or a firewall does), the second is the test web on 127.0.0.1. A crawler that tries
//   only the first address gets nothing from this host.
//
// Each has a home page linking three small pages and a 64 MiB video (`/media/clip.mp4`,
// video/mp4 with its Content-Length), which a crawler that stores HTML only should stop
// reading at its headers. robots.txt allows everything.
//
// `startBlackHole(address, port)` makes the silent address; `NetworkHosts.resolveRules(port)`
// gives the `--resolve` rules (fallback's names both addresses, the silent one first).

import net from 'node:net';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { escapeHtml } from './render-page.js';

export const NET_DOMAIN = 'net.test';
export const V6_HOST = `v6.${NET_DOMAIN}`;
export const FALLBACK_HOST = `fallback.${NET_DOMAIN}`;
export const NETWORK_HOSTS: readonly string[] = Object.freeze([V6_HOST, FALLBACK_HOST]);
/** fallback.net.test's first address, where nothing answers */
export const SILENT_ADDRESS = '127.0.0.3';
export const VIDEO_PATH = '/media/clip.mp4';
export const VIDEO_BYTES = 64 * 1024 * 1024;
/** The pages of each host a crawl stores (the video is not one). */
export const NETWORK_PAGES: readonly string[] = Object.freeze(['/', '/one.html', '/two.html', '/three.html']);

export interface NetworkResponse {
  status: number;
  type: string;
  body: string;
}

const HTML = 'text/html; charset=utf-8';

function page(host: string, title: string, body: string): string {
  return `<!DOCTYPE html><html lang="en"><head><title>${escapeHtml(title)} (${escapeHtml(host)})</title></head><body><h1>${escapeHtml(title)}</h1>\n<p>A page of ${escapeHtml(host)}, which a crawler reaches ${host === V6_HOST ? 'over IPv6 only' : 'on its second address only'}: ${escapeHtml(title)}.</p>\n${body}\n</body></html>\n`;
}

export class NetworkHosts {
  readonly hostNames = NETWORK_HOSTS;

  has(host: string): boolean {
    return NETWORK_HOSTS.includes(host);
  }

  resolveRules(port: number): string[] {
    return [`${V6_HOST}=[::1]:${port}`, `${FALLBACK_HOST}=${SILENT_ADDRESS}:${port},127.0.0.1:${port}`];
  }

  /** The response, or null when it was streamed here (the video). */
  respond(req: IncomingMessage, res: ServerResponse, host: string, target: string): NetworkResponse | null {
    const path = target.split('?')[0]!;
    if (path === '/robots.txt') return { status: 200, type: 'text/plain; charset=utf-8', body: 'User-agent: *\nAllow: /\n' };
    if (path === VIDEO_PATH) {
      streamVideo(req, res);
      return null;
    }
    const links = ['one', 'two', 'three'].map((n) => `<li><a href="/${n}.html">Page ${n}</a></li>`).join('');
    if (path === '/') return { status: 200, type: HTML, body: page(host, 'Home', `<ul>${links}<li><a href="${VIDEO_PATH}">A video</a></li></ul>`) };
    const m = /^\/(one|two|three)\.html$/.exec(path);
    if (m) return { status: 200, type: HTML, body: page(host, `Page ${m[1]}`, `<p><a href="/">Home</a></p>`) };
    return { status: 404, type: HTML, body: page(host, 'Not found', '') };
  }
}

/** 64 MiB of zeros with its Content-Length, written as fast as the client takes it (and no faster). */
function streamVideo(req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': VIDEO_BYTES });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  const chunk = Buffer.alloc(64 * 1024);
  let left = VIDEO_BYTES;
  const pump = () => {
    while (left > 0 && !res.destroyed) {
      left -= chunk.length;
      if (!res.write(chunk)) {
        res.once('drain', pump);
        return;
      }
    }
    if (!res.destroyed) res.end();
  };
  pump();
}

/**
 * A listening socket at `address:port` that never accepts: its thread sleeps right after
 * `listen` (backlog 1), connections fill the kernel's accept queue, and every later SYN is
 * dropped, so a client's connect gets no answer at all until its own timeout. In a worker
 * thread, so that only that thread sleeps.
 */
export async function startBlackHole(address: string, port: number): Promise<{ close(): Promise<void> }> {
  const stop = new SharedArrayBuffer(4);
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const server = require('node:net').createServer((s) => s.destroy());
     // backlog 1: Node reads 0 as "the default" (511)
     server.listen({ host: workerData.address, port: workerData.port, backlog: 1 }, () => {
       parentPort.postMessage('listening');
       Atomics.wait(new Int32Array(workerData.stop), 0, 0);
       server.close();
       parentPort.close();
     });
     server.on('error', (err) => { parentPort.postMessage({ error: err.message }); parentPort.close(); });`,
    { eval: true, workerData: { address, port, stop } },
  );
  const [message] = (await once(worker, 'message')) as [unknown];
  if (message !== 'listening') {
    await worker.terminate();
    throw new Error(`black hole on ${address}:${port}: ${(message as { error?: string }).error ?? String(message)}`);
  }
  // connections the accept queue holds, until one gets no answer: from then on nothing is answered
  const fillers: net.Socket[] = [];
  const close = async () => {
    for (const f of fillers) f.destroy();
    const flag = new Int32Array(stop);
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
    await worker.terminate();
  };
  for (;;) {
    const filler = net.connect({ host: address, port });
    fillers.push(filler);
    const answered = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 300);
      filler.once('connect', () => {
        clearTimeout(timer);
        resolve(true);
      });
      filler.once('error', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
    if (!answered) {
      filler.destroy();
      return { close };
    }
    if (fillers.length > 16) {
      await close();
      throw new Error(`black hole on ${address}:${port}: the kernel kept accepting connections`);
    }
  }
}
