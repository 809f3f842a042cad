// The Mermaid graphs that `brickform plan --markdown` writes, parsed by mermaid itself: every
// ```mermaid block of the Markdown snapshots in core/src/plan/snapshots (including the one
// whose addresses hold quotes, brackets, `#…;`, `%%`, `:`/`;`, HTML and non-ASCII).
//
//   npm ci --prefix tests/mermaid && node --test tests/mermaid/
//
// mermaid.parse needs a DOM for its sanitiser; jsdom provides one. Nothing is fetched at run
// time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { JSDOM } from 'jsdom';

const dom = new JSDOM('<!doctype html><html><body></body></html>');
globalThis.window = dom.window;
globalThis.document = dom.window.document;
const { default: mermaid } = await import('mermaid');

const here = dirname(fileURLToPath(import.meta.url));
const snapshots = join(here, '../../core/src/plan/snapshots');

function mermaidBlocks(text) {
  const blocks = [];
  const re = /^```mermaid\n([\s\S]*?)^```$/gm;
  let m;
  while ((m = re.exec(text)) !== null) blocks.push(m[1]);
  return blocks;
}

const files = readdirSync(snapshots).filter((f) => f.includes('__markdown_') && f.endsWith('.snap'));

test('there are Markdown snapshots with graphs', () => {
  const withGraph = files.filter((f) => mermaidBlocks(readFileSync(join(snapshots, f), 'utf8')).length > 0);
  assert.ok(withGraph.length >= 10, `only ${withGraph.length} snapshots hold a graph`);
  assert.ok(withGraph.some((f) => f.includes('graph_addresses')));
});

for (const f of files) {
  const blocks = mermaidBlocks(readFileSync(join(snapshots, f), 'utf8'));
  blocks.forEach((block, i) => {
    test(`${f} graph ${i} parses`, async () => {
      const r = await mermaid.parse(block);
      assert.equal(r.diagramType, 'flowchart-v2');
    });
  });
}

test('the parser rejects what the renderer must not write', async () => {
  // An unquoted label with brackets and quotes, as an instance address would be.
  await assert.rejects(mermaid.parse('flowchart LR\n  n0[sdp_meta_flow.t["201"]]\n'));
  // A quote inside a quoted label.
  await assert.rejects(mermaid.parse('flowchart LR\n  n0["a"b"]\n'));
});
