// src/extension.js under a fake `vscode` module and a fake language client: what it starts,
// with which arguments and for which documents, when it restarts, and what it says when the
// binary is missing.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const Module = require('node:module');

const EXT = path.join(__dirname, '..');
const pkg = JSON.parse(fs.readFileSync(path.join(EXT, 'package.json'), 'utf8'));
const MAIN = require.resolve(path.join(EXT, pkg.main));

// `require('vscode')` and `require('vscode-languageclient/node')` from the extension get the
// fakes below (whatever `fakes` holds when the extension is loaded).
const FAKE_VSCODE = '\0fake:vscode';
const FAKE_CLIENT = '\0fake:vscode-languageclient/node';
const fakes = { vscode: undefined, client: undefined };
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, parent, ...rest) {
  if (parent && parent.filename === MAIN) {
    if (request === 'vscode') return FAKE_VSCODE;
    if (request === 'vscode-languageclient/node') return FAKE_CLIENT;
  }
  return resolve.call(this, request, parent, ...rest);
};

/** A fake `vscode` API: the settings given, recording messages, commands and listeners. */
function fakeVscode(settings) {
  const state = { messages: [], commands: {}, configListeners: [], executed: [], subscriptions: [] };
  const api = {
    workspace: {
      workspaceFolders: undefined,
      getConfiguration(section) {
        assert.equal(section, 'brickform');
        return {
          get: (key, fallback) => {
            const full = `brickform.${key}`;
            if (full in settings) return settings[full];
            const declared = pkg.contributes.configuration.properties[full];
            assert.ok(declared, `the extension reads a declared setting (${full})`);
            return fallback !== undefined ? fallback : declared.default;
          },
        };
      },
      onDidChangeConfiguration(listener) {
        state.configListeners.push(listener);
        return { dispose() {} };
      },
    },
    window: {
      createOutputChannel: (name) => ({ name, appendLine() {}, append() {}, show() {}, dispose() {} }),
      showErrorMessage: async (message, ...items) => {
        state.messages.push({ message, items });
        return undefined;
      },
    },
    commands: {
      registerCommand(id, fn) {
        state.commands[id] = fn;
        return { dispose() {} };
      },
      executeCommand: async (...args) => {
        state.executed.push(args);
      },
    },
  };
  return { api, state };
}

/** A fake vscode-languageclient/node: records each client; `failStart` makes start() reject. */
function fakeClientModule({ failStart } = {}) {
  const clients = [];
  class LanguageClient {
    constructor(id, name, serverOptions, clientOptions) {
      Object.assign(this, { id, name, serverOptions, clientOptions, started: false, stopped: false });
      clients.push(this);
    }
    async start() {
      if (failStart) throw new Error(failStart);
      this.started = true;
    }
    async stop() {
      this.stopped = true;
    }
    async dispose() {
      this.stopped = true;
    }
  }
  return { module: { LanguageClient, TransportKind: { stdio: 0, ipc: 1, pipe: 2, socket: 3 } }, clients };
}

/** Loads a fresh copy of the extension with these settings; returns it and the fakes. */
function load(settings, clientOptions) {
  const vscode = fakeVscode(settings);
  const client = fakeClientModule(clientOptions);
  require.cache[FAKE_VSCODE] = { id: FAKE_VSCODE, filename: FAKE_VSCODE, loaded: true, exports: vscode.api };
  require.cache[FAKE_CLIENT] = { id: FAKE_CLIENT, filename: FAKE_CLIENT, loaded: true, exports: client.module };
  delete require.cache[MAIN];
  const ext = require(MAIN);
  const context = { subscriptions: vscode.state.subscriptions };
  return { ext, context, state: vscode.state, clients: client.clients };
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'brickform-vscode-test-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** An executable file standing for the brickform binary. */
function fakeBinary(dir, name = 'brickform') {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, name);
  fs.writeFileSync(file, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  return file;
}

/** Runs `fn` with PATH set to `value`. */
async function withPath(value, fn) {
  const saved = process.env.PATH;
  process.env.PATH = value;
  try {
    return await fn();
  } finally {
    process.env.PATH = saved;
  }
}

const event = (...changed) => ({ affectsConfiguration: (s) => changed.includes(s) });

test('activate starts `<brickform.path> lsp` over stdio for brickform files', async () => {
  const bin = fakeBinary(path.join(tmp, 'a'));
  const { ext, context, state, clients } = load({ 'brickform.path': bin });
  await ext.activate(context);
  assert.deepEqual(state.messages, [], 'no error');
  assert.equal(clients.length, 1);
  const [c] = clients;
  assert.equal(c.id, 'brickform', 'the client id makes brickform.trace.server its trace setting');
  assert.equal(c.serverOptions.command, bin);
  assert.deepEqual(c.serverOptions.args, ['lsp']);
  assert.equal(c.serverOptions.transport, 0, 'stdio');
  assert.deepEqual(c.clientOptions.documentSelector, [{ scheme: 'file', language: 'brickform' }]);
  assert.ok(c.started, 'the client is started');
  assert.equal(ext.currentClient(), c);

  // The commands it registers are the ones package.json contributes.
  assert.deepEqual(
    Object.keys(state.commands).sort(),
    pkg.contributes.commands.map((x) => x.command).sort(),
  );

  await ext.deactivate();
  assert.ok(c.stopped, 'deactivate stops the client');
  assert.equal(ext.currentClient(), undefined);
});

test('the default path is `brickform`, found on PATH; brickform.lsp.args follow `lsp`', async () => {
  const dir = path.join(tmp, 'on-path');
  fakeBinary(dir);
  await withPath(dir, async () => {
    const { ext, context, state, clients } = load({ 'brickform.lsp.args': ['--env', 'prod'] });
    await ext.activate(context);
    assert.deepEqual(state.messages, []);
    assert.equal(clients.length, 1);
    assert.equal(clients[0].serverOptions.command, 'brickform');
    assert.deepEqual(clients[0].serverOptions.args, ['lsp', '--env', 'prod']);
    await ext.deactivate();
  });
});

test('a missing binary gives an error naming brickform.path, and no client', async () => {
  const missing = path.join(tmp, 'nowhere', 'brickform');
  const { ext, context, state, clients } = load({ 'brickform.path': missing });
  await ext.activate(context);
  assert.equal(clients.length, 0, 'nothing is started');
  assert.equal(state.messages.length, 1);
  const { message, items } = state.messages[0];
  assert.match(message, /brickform\.path/, message);
  assert.ok(message.includes(missing), `the message names the path: ${message}`);
  assert.deepEqual(items, ['Open Settings']);

  // Not on PATH either.
  await withPath(path.join(tmp, 'empty'), async () => {
    const again = load({});
    await again.ext.activate(again.context);
    assert.equal(again.clients.length, 0);
    assert.equal(again.state.messages.length, 1);
    assert.match(again.state.messages[0].message, /brickform\.path/);
    assert.match(again.state.messages[0].message, /not found on PATH/);
  });

  // A file that is there but not executable.
  const plain = path.join(tmp, 'plain', 'brickform');
  fs.mkdirSync(path.dirname(plain), { recursive: true });
  fs.writeFileSync(plain, '', { mode: 0o644 });
  if (process.platform !== 'win32') {
    const third = load({ 'brickform.path': plain });
    await third.ext.activate(third.context);
    assert.equal(third.clients.length, 0);
    assert.match(third.state.messages[0].message, /brickform\.path/);
  }
});

test('a server that fails to start gives the same error', async () => {
  const bin = fakeBinary(path.join(tmp, 'b'));
  const { ext, context, state, clients } = load({ 'brickform.path': bin }, { failStart: 'spawn EACCES' });
  await ext.activate(context);
  assert.equal(clients.length, 1);
  assert.equal(ext.currentClient(), undefined);
  assert.equal(state.messages.length, 1);
  assert.match(state.messages[0].message, /brickform\.path/);
  assert.match(state.messages[0].message, /spawn EACCES/);
});

test('changing brickform.path or brickform.lsp.args restarts the server; other settings do not', async () => {
  const first = fakeBinary(path.join(tmp, 'c1'));
  const second = fakeBinary(path.join(tmp, 'c2'));
  const settings = { 'brickform.path': first };
  const { ext, context, state, clients } = load(settings);
  await ext.activate(context);
  assert.equal(state.configListeners.length, 1);
  const [listener] = state.configListeners;

  settings['brickform.path'] = second;
  listener(event('brickform', 'brickform.path'));
  await ext.settled();
  assert.equal(clients.length, 2);
  assert.ok(clients[0].stopped, 'the old server is stopped');
  assert.equal(clients[1].serverOptions.command, second);
  assert.ok(clients[1].started);

  settings['brickform.lsp.args'] = ['--env', 'prod'];
  listener(event('brickform', 'brickform.lsp.args'));
  await ext.settled();
  assert.equal(clients.length, 3);
  assert.deepEqual(clients[2].serverOptions.args, ['lsp', '--env', 'prod']);

  listener(event('brickform', 'brickform.trace.server'));
  listener(event('editor.fontSize'));
  await ext.settled();
  assert.equal(clients.length, 3, 'no restart for other settings');

  // Set to a missing binary: the running server stops, and the error names the setting.
  settings['brickform.path'] = path.join(tmp, 'gone', 'brickform');
  listener(event('brickform', 'brickform.path'));
  await ext.settled();
  assert.equal(clients.length, 3);
  assert.ok(clients[2].stopped);
  assert.equal(state.messages.length, 1);
  assert.match(state.messages[0].message, /brickform\.path/);

  // The restart command.
  settings['brickform.path'] = first;
  await state.commands['brickform.restartServer']();
  assert.equal(clients.length, 4);
  assert.ok(clients[3].started);
  await ext.deactivate();
});

test('a relative path is taken from the first workspace folder', async () => {
  const folder = path.join(tmp, 'ws');
  const bin = fakeBinary(path.join(folder, 'target', 'debug'));
  const { ext, context, clients, state } = load({ 'brickform.path': './target/debug/brickform' });
  require.cache[FAKE_VSCODE].exports.workspace.workspaceFolders = [{ uri: { fsPath: folder } }];
  await ext.activate(context);
  assert.deepEqual(state.messages, []);
  assert.equal(clients[0].serverOptions.command, bin);
  await ext.deactivate();
});
