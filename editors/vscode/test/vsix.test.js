// The packaged extension (the .vsix scripts/build-vsix writes, named by BRICKFORM_VSIX): it
// holds what VS Code needs, as it is in the repository, without the development tools; and its
// extension.js loads from it, with the language client packaged beside it.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const zlib = require('node:zlib');
const Module = require('node:module');

const EXT = path.join(__dirname, '..');

/** The entries of a zip file: name -> contents (a Buffer). Enough of the format for a .vsix. */
function readZip(file) {
  const buf = fs.readFileSync(file);
  // The end-of-central-directory record, searched for from the end (a comment may follow it).
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 0xffff); i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  assert.ok(eocd >= 0, `${file} is a zip file`);
  const count = buf.readUInt16LE(eocd + 10);
  let at = buf.readUInt32LE(eocd + 16);
  const entries = new Map();
  for (let n = 0; n < count; n++) {
    assert.equal(buf.readUInt32LE(at), 0x02014b50, 'a central directory entry');
    const method = buf.readUInt16LE(at + 10);
    const compressed = buf.readUInt32LE(at + 20);
    const nameLen = buf.readUInt16LE(at + 28);
    const extraLen = buf.readUInt16LE(at + 30);
    const commentLen = buf.readUInt16LE(at + 32);
    const local = buf.readUInt32LE(at + 42);
    const name = buf.toString('utf8', at + 46, at + 46 + nameLen);
    assert.equal(buf.readUInt32LE(local), 0x04034b50, `a local header for ${name}`);
    const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const data = buf.subarray(start, start + compressed);
    if (!name.endsWith('/')) {
      assert.ok(method === 0 || method === 8, `${name}: stored or deflated (method ${method})`);
      entries.set(name, method === 0 ? Buffer.from(data) : zlib.inflateRawSync(data));
    }
    at += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
}

const vsixPath = process.env.BRICKFORM_VSIX;

test('BRICKFORM_VSIX names the packaged extension', () => {
  assert.ok(
    vsixPath,
    'BRICKFORM_VSIX is not set: build the extension with `scripts/build-vsix` and run ' +
      '`BRICKFORM_VSIX=<the path it prints> node --test editors/vscode/test/` (scripts/test does both)',
  );
  assert.ok(fs.existsSync(vsixPath), `BRICKFORM_VSIX=${vsixPath} exists`);
});

test('the .vsix holds the manifest, grammar, language configuration, extension.js and the client', () => {
  assert.ok(vsixPath && fs.existsSync(vsixPath), 'BRICKFORM_VSIX (see the test above)');
  const entries = readZip(vsixPath);
  const names = [...entries.keys()];
  for (const want of [
    'extension.vsixmanifest',
    'extension/package.json',
    'extension/syntaxes/brickform.tmLanguage.json',
    'extension/src/extension.js',
    'extension/language-configuration.json',
    'extension/node_modules/vscode-languageclient/package.json',
    'extension/node_modules/vscode-languageclient/node.js',
  ]) {
    assert.ok(entries.has(want), `the .vsix has ${want}`);
  }
  assert.ok(names.some((n) => /^extension\/readme\.md$/i.test(n)), 'the .vsix has the README');

  // The files are the repository's (a stale .vsix fails here).
  for (const file of ['syntaxes/brickform.tmLanguage.json', 'src/extension.js', 'language-configuration.json']) {
    assert.ok(
      entries.get(`extension/${file}`).equals(fs.readFileSync(path.join(EXT, file))),
      `extension/${file} is the repository's ${file}; rebuild with scripts/build-vsix`,
    );
  }
  const packaged = JSON.parse(entries.get('extension/package.json').toString('utf8'));
  const source = JSON.parse(fs.readFileSync(path.join(EXT, 'package.json'), 'utf8'));
  for (const key of ['name', 'publisher', 'version', 'main', 'engines', 'contributes', 'activationEvents']) {
    assert.deepEqual(packaged[key], source[key], `the packaged package.json's ${key}`);
  }
  assert.equal(path.basename(vsixPath), `brickform-${source.version}.vsix`);
  const manifest = entries.get('extension.vsixmanifest').toString('utf8');
  assert.match(manifest, new RegExp(`Version="${source.version.replace(/\./g, '\\.')}"`));
  assert.match(manifest, /Publisher="brickform"/);

  // Nothing of the tests or the development tools.
  for (const n of names) {
    assert.ok(!n.startsWith('extension/test/'), `no test file in the .vsix: ${n}`);
    assert.ok(!/node_modules\/(@vscode\/vsce|vscode-textmate|vscode-oniguruma)\//.test(n), `no dev dependency: ${n}`);
    assert.ok(!n.endsWith('package-lock.json'), `no lock file: ${n}`);
  }
});

test('the packaged extension.js loads with the packaged vscode-languageclient', () => {
  assert.ok(vsixPath && fs.existsSync(vsixPath), 'BRICKFORM_VSIX (see the first test)');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'brickform-vsix-'));
  try {
    for (const [name, data] of readZip(vsixPath)) {
      const out = path.join(dir, name);
      assert.ok(out.startsWith(dir + path.sep), `${name} stays inside the extraction directory`);
      fs.mkdirSync(path.dirname(out), { recursive: true });
      fs.writeFileSync(out, data);
    }
    const root = path.join(dir, 'extension');
    const main = path.join(root, JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).main);

    // `vscode` is the one module VS Code provides; a stand-in whose every member is a class
    // is enough for the client library to load (it subclasses a few of them).
    const FAKE = '\0fake:vscode-any';
    const stub = new Proxy({}, { get: (_, k) => (k === '__esModule' ? false : class {}) });
    require.cache[FAKE] = { id: FAKE, filename: FAKE, loaded: true, exports: stub };
    const resolve = Module._resolveFilename;
    const loadedFrom = [];
    Module._resolveFilename = function (request, parent, ...rest) {
      if (request === 'vscode') return FAKE;
      const resolved = resolve.call(this, request, parent, ...rest);
      if (parent && parent.filename === main) loadedFrom.push(resolved);
      return resolved;
    };
    try {
      const ext = require(main);
      assert.equal(typeof ext.activate, 'function');
      assert.equal(typeof ext.deactivate, 'function');
    } finally {
      Module._resolveFilename = resolve;
      delete require.cache[FAKE];
    }
    const client = loadedFrom.find((p) => p.includes(`${path.sep}vscode-languageclient${path.sep}`));
    assert.ok(client, `extension.js loaded vscode-languageclient (${loadedFrom.join(', ')})`);
    assert.ok(client.startsWith(root + path.sep), `from inside the .vsix: ${client}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
