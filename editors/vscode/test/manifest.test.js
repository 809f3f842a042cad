// package.json's contributions agree with each other, with the files they name and with the
// workspace's Cargo.toml; the dependencies are pinned and the lock file matches them.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

const EXT = path.join(__dirname, '..');
const REPO = path.join(EXT, '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(EXT, 'package.json'), 'utf8'));

/** A key of Cargo.toml's [workspace.package] table (a string value). */
function workspacePackage(key) {
  const toml = fs.readFileSync(path.join(REPO, 'Cargo.toml'), 'utf8');
  const table = toml.split(/^\[workspace\.package\]\s*$/m)[1];
  assert.ok(table, 'Cargo.toml has [workspace.package]');
  const body = table.split(/^\[/m)[0];
  const m = body.match(new RegExp(`^${key}\\s*=\\s*"([^"]*)"`, 'm'));
  assert.ok(m, `[workspace.package] has ${key}`);
  return m[1];
}

/** The smallest version a `^x.y.z` or `>= x[.y[.z]]` range admits, as [x, y, z]. */
function minimum(range) {
  const m = /^(?:\^|>=\s*)?(\d+)(?:\.(\d+))?(?:\.(\d+))?$/.exec(range.trim());
  assert.ok(m, `a simple range: ${range}`);
  return m.slice(1).map((n) => Number(n ?? 0));
}

const cmp = (a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

test('identity: name, publisher, version and licence follow Cargo.toml', () => {
  assert.equal(pkg.name, 'brickform');
  assert.equal(pkg.publisher, 'brickform');
  assert.equal(pkg.version, workspacePackage('version'), 'package.json version = Cargo.toml [workspace.package] version');
  assert.equal(pkg.license, workspacePackage('license'), 'package.json license = Cargo.toml [workspace.package] license');
  // No repository (Cargo.toml's is a placeholder; scripts/build-vsix passes
  // --allow-missing-repository), or the same one.
  if (pkg.repository !== undefined) {
    const url = typeof pkg.repository === 'string' ? pkg.repository : pkg.repository.url;
    assert.equal(url, workspacePackage('repository'));
  }
  assert.ok(fs.existsSync(path.join(EXT, 'README.md')), 'README.md');
  assert.ok(fs.existsSync(path.join(EXT, pkg.main)), `main ${pkg.main} exists`);
  assert.deepEqual(pkg.activationEvents, ['onLanguage:brickform']);
});

test('the language: id, aliases, extension and its configuration', () => {
  const langs = pkg.contributes.languages;
  assert.equal(langs.length, 1);
  const [lang] = langs;
  assert.equal(lang.id, 'brickform');
  assert.ok(lang.aliases.includes('Brickform HCL'), 'alias "Brickform HCL"');
  assert.deepEqual(lang.extensions, ['.bf.hcl']);
  const confPath = path.join(EXT, lang.configuration);
  assert.ok(fs.existsSync(confPath), `${lang.configuration} exists`);
  const conf = JSON.parse(fs.readFileSync(confPath, 'utf8'));
  assert.equal(conf.comments.lineComment, '#');
  assert.deepEqual(conf.comments.blockComment, ['/*', '*/']);
  for (const pair of [['{', '}'], ['[', ']'], ['(', ')']]) {
    assert.ok(conf.brackets.some((b) => b[0] === pair[0] && b[1] === pair[1]), `bracket ${pair}`);
    assert.ok(conf.autoClosingPairs.some((p) => p.open === pair[0] && p.close === pair[1]), `auto-closing ${pair}`);
  }
  assert.ok(conf.autoClosingPairs.some((p) => p.open === '"' && p.close === '"'), 'auto-closing quotes');
  assert.ok(conf.folding?.markers?.start && conf.folding?.markers?.end, 'folding markers');
  for (const re of [conf.folding.markers.start, conf.folding.markers.end, conf.wordPattern]) {
    assert.doesNotThrow(() => new RegExp(re), re);
  }
  assert.ok(new RegExp(conf.folding.markers.start).test('# region sources'));
  assert.ok(new RegExp(conf.folding.markers.end).test('  // endregion'));
});

test('the grammar: for the language, its scope name, a file that exists', () => {
  const grammars = pkg.contributes.grammars;
  assert.equal(grammars.length, 1);
  const [g] = grammars;
  assert.equal(g.language, 'brickform');
  assert.equal(g.scopeName, 'source.hcl.brickform');
  assert.equal(g.path, './syntaxes/brickform.tmLanguage.json');
  const file = path.join(EXT, g.path);
  assert.ok(fs.existsSync(file), `${g.path} exists`);
  const raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  assert.equal(raw.scopeName, g.scopeName, 'the file declares the same scope name');
  // Every include names a rule the repository has.
  const includes = JSON.stringify(raw).match(/"include":"#[^"]+"/g) ?? [];
  assert.ok(includes.length > 10);
  for (const inc of includes) {
    const name = inc.slice('"include":"#'.length, -1);
    assert.ok(raw.repository[name], `the grammar's repository has ${name}`);
  }
});

test('the settings: brickform.path, brickform.lsp.args, brickform.trace.server', () => {
  const props = pkg.contributes.configuration.properties;
  assert.deepEqual(Object.keys(props).sort(), ['brickform.lsp.args', 'brickform.path', 'brickform.trace.server']);
  assert.equal(props['brickform.path'].type, 'string');
  assert.equal(props['brickform.path'].default, 'brickform');
  assert.equal(props['brickform.lsp.args'].type, 'array');
  assert.equal(props['brickform.lsp.args'].items.type, 'string');
  assert.deepEqual(props['brickform.lsp.args'].default, []);
  assert.deepEqual(props['brickform.trace.server'].enum, ['off', 'messages', 'verbose']);
  assert.equal(props['brickform.trace.server'].default, 'off');
  // The settings that choose what to run are not taken from an untrusted workspace.
  const trust = pkg.capabilities.untrustedWorkspaces;
  assert.equal(trust.supported, 'limited');
  assert.deepEqual(trust.restrictedConfigurations.sort(), ['brickform.lsp.args', 'brickform.path']);
  // The extension reads the settings the manifest declares.
  const src = fs.readFileSync(path.join(EXT, pkg.main), 'utf8');
  for (const s of ['brickform.path', 'brickform.lsp.args']) {
    assert.ok(src.includes(`'${s}'`), `${pkg.main} names ${s}`);
  }
});

test('dependencies: pinned, locked, and the client supports the VS Code versions we claim', () => {
  const lock = JSON.parse(fs.readFileSync(path.join(EXT, 'package-lock.json'), 'utf8'));
  const root = lock.packages[''];
  for (const field of ['dependencies', 'devDependencies']) {
    for (const [name, version] of Object.entries(pkg[field])) {
      assert.match(version, /^\d+\.\d+\.\d+$/, `${name} is pinned to one version`);
      assert.equal(root[field][name], version, `the lock file has ${name} ${version}`);
      assert.equal(lock.packages[`node_modules/${name}`].version, version, `the lock file installs ${name} ${version}`);
    }
  }
  assert.deepEqual(Object.keys(pkg.dependencies), ['vscode-languageclient']);
  for (const dev of ['@vscode/vsce', 'vscode-textmate', 'vscode-oniguruma']) {
    assert.ok(pkg.devDependencies[dev], `dev dependency ${dev}`);
  }
  const client = lock.packages['node_modules/vscode-languageclient'];
  assert.ok(
    cmp(minimum(pkg.engines.vscode), minimum(client.engines.vscode)) >= 0,
    `engines.vscode ${pkg.engines.vscode} is within what vscode-languageclient needs (${client.engines.vscode})`,
  );
  // vsce runs on this Node.js.
  const vsce = lock.packages['node_modules/@vscode/vsce'];
  const node = process.versions.node.split('.').map(Number);
  assert.ok(cmp(node, minimum(vsce.engines.node)) >= 0, `Node.js ${process.versions.node} runs vsce (${vsce.engines.node})`);
});
