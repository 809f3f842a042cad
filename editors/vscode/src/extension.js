// The Brickform extension: starts `brickform lsp` (the language server of the brickform
// binary, over standard input and output) for `*.bf.hcl` files, and restarts it when the
// settings that say how to start it change. Plain JavaScript, loaded as is: no build step.
'use strict';

const fs = require('fs');
const os = require('os');
const path = require('path');
const vscode = require('vscode');
const { LanguageClient, TransportKind } = require('vscode-languageclient/node');

const SECTION = 'brickform';
const PATH_SETTING = 'brickform.path';
const ARGS_SETTING = 'brickform.lsp.args';

/** @type {LanguageClient | undefined} */
let client;
/** The start or restart under way, so that two never overlap. */
let pending = Promise.resolve();
/** @type {vscode.OutputChannel | undefined} */
let output;

/**
 * The command and arguments the settings give: `<brickform.path> lsp <brickform.lsp.args…>`.
 * A relative path with a directory part is taken from the first workspace folder.
 */
function serverCommand() {
  const config = vscode.workspace.getConfiguration(SECTION);
  let command = String(config.get('path') || 'brickform').trim() || 'brickform';
  if (command.startsWith('~/') || command.startsWith('~\\')) {
    command = path.join(os.homedir(), command.slice(2));
  }
  const folders = vscode.workspace.workspaceFolders;
  if (hasDirectory(command) && !path.isAbsolute(command) && folders && folders.length > 0) {
    command = path.join(folders[0].uri.fsPath, command);
  }
  const extra = config.get('lsp.args');
  const args = ['lsp', ...(Array.isArray(extra) ? extra.map(String) : [])];
  return { command, args };
}

function hasDirectory(command) {
  return command.includes('/') || (process.platform === 'win32' && command.includes('\\'));
}

/** Whether `file` is a file this process may execute. */
function isExecutable(file) {
  try {
    if (!fs.statSync(file).isFile()) {
      return false;
    }
    if (process.platform !== 'win32') {
      fs.accessSync(file, fs.constants.X_OK);
    }
    return true;
  } catch {
    return false;
  }
}

/**
 * Where `command` is: itself when it names a path, else the first match on PATH (with
 * PATHEXT's extensions on Windows); undefined when there is none.
 */
function findExecutable(command, env = process.env) {
  const exts =
    process.platform === 'win32'
      ? ['', ...(env.PATHEXT || '.EXE;.CMD;.BAT;.COM').split(';').filter(Boolean)]
      : [''];
  const candidates = (base) => exts.map((e) => base + e);
  if (hasDirectory(command) || path.isAbsolute(command)) {
    return candidates(command).find(isExecutable);
  }
  const dirs = (env.PATH || env.Path || '').split(path.delimiter).filter(Boolean);
  for (const dir of dirs) {
    const found = candidates(path.join(dir, command)).find(isExecutable);
    if (found) {
      return found;
    }
  }
  return undefined;
}

/** The message shown when the server cannot be started: it names the setting to change. */
function cannotStartMessage(command, reason) {
  return (
    `Brickform: cannot start the language server \`${command} lsp\` (${reason}). ` +
    `Install brickform and put it on PATH, or set \`${PATH_SETTING}\` to the full path of the brickform binary.`
  );
}

async function showCannotStart(command, reason) {
  const open = 'Open Settings';
  const choice = await vscode.window.showErrorMessage(cannotStartMessage(command, reason), open);
  if (choice === open) {
    await vscode.commands.executeCommand('workbench.action.openSettings', PATH_SETTING);
  }
}

async function startClient() {
  const { command, args } = serverCommand();
  if (!findExecutable(command)) {
    const reason = hasDirectory(command)
      ? 'no executable file there'
      : 'not found on PATH';
    void showCannotStart(command, reason);
    return;
  }
  /** @type {import('vscode-languageclient/node').ServerOptions} */
  const serverOptions = { command, args, transport: TransportKind.stdio };
  /** @type {import('vscode-languageclient/node').LanguageClientOptions} */
  const clientOptions = {
    documentSelector: [{ scheme: 'file', language: 'brickform' }],
    outputChannel: output,
  };
  const next = new LanguageClient(SECTION, 'Brickform', serverOptions, clientOptions);
  client = next;
  try {
    await next.start();
  } catch (err) {
    if (client === next) {
      client = undefined;
    }
    try {
      await next.dispose();
    } catch {
      // It never ran.
    }
    void showCannotStart(command, err instanceof Error ? err.message : String(err));
  }
}

async function stopClient() {
  const running = client;
  client = undefined;
  if (running) {
    try {
      await running.stop();
    } catch {
      // A server that failed to start, or already exited, has nothing to stop.
    }
  }
}

/** Stops the server, if any, and starts it again with the current settings. */
function restart() {
  // After the previous start or stop, whatever became of it: one failure must not stop the
  // next restarts.
  pending = pending.catch(() => undefined).then(stopClient).then(startClient);
  return pending;
}

/** @param {vscode.ExtensionContext} context */
function activate(context) {
  output = vscode.window.createOutputChannel('Brickform');
  context.subscriptions.push(output);
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration(PATH_SETTING) || e.affectsConfiguration(ARGS_SETTING)) {
        void restart();
      }
    }),
    vscode.commands.registerCommand('brickform.restartServer', () => restart()),
    { dispose: () => void stopClient() },
  );
  return restart();
}

function deactivate() {
  pending = pending.catch(() => undefined).then(stopClient);
  return pending;
}

module.exports = {
  activate,
  deactivate,
  // For the tests.
  cannotStartMessage,
  findExecutable,
  serverCommand,
  currentClient: () => client,
  settled: () => pending,
};
