import { it } from 'node:test';
import assert from 'node:assert/strict';
import { hostParts } from '../../stages/archive/host-parts.js';

it("hostParts gives cc-index's host columns with the schema's own examples", () => {
  const bbc = hostParts('www.bbc.co.uk');
  assert.equal(bbc.url_host_tld, 'uk', 'the last label, not the public suffix');
  assert.equal(bbc.url_host_2nd_last_part, 'co');
  assert.equal(bbc.url_host_registry_suffix, 'co.uk');
  assert.equal(bbc.url_host_registered_domain, 'bbc.co.uk');
  assert.equal(bbc.url_host_name_reversed, 'uk.co.bbc.www');
  const www = hostParts('www.example.com');
  assert.deepEqual([www.url_host_tld, www.url_host_2nd_last_part, www.url_host_3rd_last_part, www.url_host_4th_last_part], ['com', 'example', 'www', null]);
  assert.equal(hostParts('host1.sub2.subdomain.example.com').url_host_5th_last_part, 'host1');
  const s3 = hostParts('commoncrawl.s3.amazonaws.com');
  assert.deepEqual([s3.url_host_registry_suffix, s3.url_host_registered_domain], ['com', 'amazonaws.com']);
  assert.deepEqual([s3.url_host_private_suffix, s3.url_host_private_domain], ['s3.amazonaws.com', 'commoncrawl.s3.amazonaws.com']);
  const blog = hostParts('myblog.blogspot.com');
  assert.deepEqual([blog.url_host_private_suffix, blog.url_host_private_domain], ['blogspot.com', 'myblog.blogspot.com']);
  assert.equal(hostParts('example.com.').url_host_tld, 'com', 'a trailing dot is not a label');
});

it('hostParts: an IP address has no parts; a name under no listed suffix has labels only', () => {
  for (const ip of ['127.0.0.1', '[::1]']) assert.ok(Object.values(hostParts(ip)).every((v) => v === null), ip);
  const t = hostParts('site1.test');
  assert.deepEqual([t.url_host_tld, t.url_host_2nd_last_part, t.url_host_registry_suffix, t.url_host_registered_domain, t.url_host_private_suffix], ['test', 'site1', null, null, null]);
});
