import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedServer, StoreInUseError } from '../../ops/nats/embedded-server.js';
import { connectNats } from '../../pipeline/adapters/nats-connection.js';

test('a second start on a store whose crawl is still running fails, naming both processes, and leaves the running server alone', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'store-in-use-'));
  // this process starts it and stays alive: as a crawl that is running
  const first = await startEmbeddedServer(dir);
  try {
    await assert.rejects(startEmbeddedServer(dir), (err: Error) => {
      assert.ok(err instanceof StoreInUseError, err.message);
      assert.match(err.message, new RegExp(`pid ${process.pid}\\b.*nats-server \\(pid ${first.pid}\\)`));
      return true;
    });
    assert.equal(readFileSync(path.join(dir, 'nats-server.pid'), 'utf8').trim(), String(first.pid), 'the pid file still names the running server');
    const nc = await connectNats(first.url, 'store-in-use-test');
    await nc.flush();
    await nc.close();
  } finally {
    await first.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  assert.equal(existsSync(path.join(dir, 'nats-server.pid')), false);
});
