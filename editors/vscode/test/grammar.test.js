// The TextMate grammar (syntaxes/brickform.tmLanguage.json), run by the engine VS Code runs it
// with (vscode-textmate on the Oniguruma regex library, both pinned in package-lock.json), on
// the repository's examples and on the template forms the examples do not use.
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

const EXT = path.join(__dirname, '..');
const REPO = path.join(EXT, '..', '..');
const GRAMMAR = path.join(EXT, 'syntaxes', 'brickform.tmLanguage.json');
const SCOPE = 'source.hcl.brickform';

let grammarPromise;
/** The grammar, loaded once. */
function grammar() {
  grammarPromise ??= (async () => {
    const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
    await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
    const registry = new vsctm.Registry({
      onigLib: Promise.resolve({
        createOnigScanner: (sources) => new oniguruma.OnigScanner(sources),
        createOnigString: (s) => new oniguruma.OnigString(s),
      }),
      loadGrammar: async (scopeName) =>
        scopeName === SCOPE
          ? vsctm.parseRawGrammar(fs.readFileSync(GRAMMAR, 'utf8'), GRAMMAR)
          : null,
    });
    const g = await registry.loadGrammar(SCOPE);
    assert.ok(g, `the grammar ${SCOPE} loads`);
    return g;
  })();
  return grammarPromise;
}

/**
 * Tokenizes `text`: for each line, its text, the rule-stack depth it starts at, and its tokens
 * ({ text, scopes }, scopes without the grammar's own).
 */
async function tokenize(text) {
  const g = await grammar();
  let state = vsctm.INITIAL;
  const lines = [];
  for (const line of text.split(/\r?\n/)) {
    const depth = state.depth;
    const r = g.tokenizeLine(line, state);
    lines.push({
      line,
      depth,
      tokens: r.tokens.map((t) => ({
        text: line.slice(t.startIndex, t.endIndex),
        scopes: t.scopes.slice(1),
      })),
    });
    state = r.ruleStack;
  }
  return { lines, endDepth: state.depth };
}

/** The scopes of the token `token` on the first line containing `lineText` (or matching it). */
function scopes(doc, lineText, token, nth = 0) {
  const matches = (l) => (lineText instanceof RegExp ? lineText.test(l) : l.includes(lineText));
  const line = doc.lines.find((l) => matches(l.line));
  assert.ok(line, `a line with ${lineText}`);
  const found = line.tokens.filter((t) => t.text === token);
  assert.ok(
    found.length > nth,
    `token ${JSON.stringify(token)} on line ${JSON.stringify(line.line)}; tokens: ${JSON.stringify(
      line.tokens.map((t) => t.text),
    )}`,
  );
  return found[nth].scopes;
}

/** Asserts that the token has every scope in `want` (and none in `unwanted`). */
function expectScopes(doc, lineText, token, want, unwanted = [], nth = 0) {
  const got = scopes(doc, lineText, token, nth);
  for (const s of want) {
    assert.ok(got.includes(s), `${JSON.stringify(token)} on "${lineText}" has ${s}; got ${got.join(' ')}`);
  }
  for (const s of unwanted) {
    assert.ok(!got.includes(s), `${JSON.stringify(token)} on "${lineText}" has no ${s}; got ${got.join(' ')}`);
  }
}

/** Every example configuration of the repository. */
function exampleFiles() {
  const out = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== '.brickform' && e.name !== 'node_modules') walk(p);
      } else if (e.name.endsWith('.bf.hcl')) {
        out.push(p);
      }
    }
  };
  walk(path.join(REPO, 'examples'));
  return out.sort();
}

const example = (rel) => fs.readFileSync(path.join(REPO, 'examples', rel), 'utf8');

test('every example is tokenized to the end, every block closed, nothing left unrecognised', async () => {
  const files = exampleFiles();
  assert.ok(files.length >= 5, `the examples are found (${files.length})`);
  for (const file of files) {
    const rel = path.relative(REPO, file);
    const doc = await tokenize(fs.readFileSync(file, 'utf8'));
    assert.equal(doc.endDepth, 1, `${rel} ends at the top level`);
    doc.lines.forEach((l, i) => {
      // A line at column 0 that is not a closing brace starts at the top level: the block
      // before it, its strings and brackets, all closed.
      if (/^[^\s}]/.test(l.line)) {
        assert.equal(l.depth, 1, `${rel}:${i + 1} starts at the top level: ${l.line}`);
      }
      for (const t of l.tokens) {
        if (t.text.trim() === '') continue;
        const specific = t.scopes.filter((s) => !s.startsWith('meta.') && s !== 'source.hcl.embedded');
        assert.ok(
          specific.length > 0,
          `${rel}:${i + 1}: ${JSON.stringify(t.text)} is recognised (scopes: ${t.scopes.join(' ') || 'none'})`,
        );
      }
    });
  }
});

test('medallion: blocks, labels, arguments, interpolations, references, comments, operators', async () => {
  const doc = await tokenize(example('medallion/main.bf.hcl'));
  const header = 'resource "databricks_catalog" "shipments" {';
  expectScopes(doc, header, 'resource', ['meta.block.hcl', 'entity.name.type.block.hcl']);
  expectScopes(doc, header, 'databricks_catalog', ['entity.name.label.hcl', 'string.quoted.double.hcl']);
  expectScopes(doc, header, 'shipments', ['entity.name.label.hcl', 'string.quoted.double.hcl']);
  expectScopes(doc, header, '{', ['punctuation.section.block.begin.hcl']);
  expectScopes(doc, 'locals {', 'locals', ['entity.name.type.block.hcl']);

  // An argument, and a reference as its value.
  expectScopes(doc, '  name    = local.catalog', 'name', ['entity.other.attribute-name.hcl']);
  expectScopes(doc, '  name    = local.catalog', '=', ['keyword.operator.assignment.hcl']);
  expectScopes(doc, '  name    = local.catalog', 'local', ['variable.language.hcl']);
  expectScopes(doc, '  name    = local.catalog', 'catalog', ['variable.other.member.hcl']);

  // An interpolation inside a string: the text around it is string, the reference inside is
  // an expression inside the string.
  const comment = 'comment = "Shipment events lakehouse (${local.env}), managed by brickform"';
  expectScopes(doc, comment, '"', ['string.quoted.double.hcl', 'punctuation.definition.string.begin.hcl']);
  expectScopes(doc, comment, 'Shipment events lakehouse (', ['string.quoted.double.hcl'], ['meta.interpolation.hcl']);
  expectScopes(doc, comment, '${', [
    'string.quoted.double.hcl',
    'meta.interpolation.hcl',
    'punctuation.section.interpolation.begin.hcl',
  ]);
  expectScopes(doc, comment, 'local', ['string.quoted.double.hcl', 'meta.interpolation.hcl', 'variable.language.hcl']);
  expectScopes(doc, comment, 'env', ['meta.interpolation.hcl', 'variable.other.member.hcl']);
  expectScopes(doc, comment, '}', ['punctuation.section.interpolation.end.hcl']);
  expectScopes(doc, comment, '), managed by brickform', ['string.quoted.double.hcl'], ['meta.interpolation.hcl']);

  // Comments, at the top level and inside a block.
  const top = '# Carriers drop JSON files of shipment events here.';
  expectScopes(doc, top, '#', ['comment.line.number-sign.hcl', 'punctuation.definition.comment.hcl']);
  expectScopes(doc, top, ' Carriers drop JSON files of shipment events here.', ['comment.line.number-sign.hcl']);
  expectScopes(doc, '  # Only production runs', '#', ['meta.block.hcl', 'comment.line.number-sign.hcl']);

  // A conditional on brickform.environment.
  const cond = 'schedule_pause = brickform.environment == "prod" ? "UNPAUSED" : "PAUSED"';
  expectScopes(doc, cond, 'schedule_pause', ['entity.other.attribute-name.hcl']);
  expectScopes(doc, cond, 'brickform', ['variable.language.hcl']);
  expectScopes(doc, cond, '==', ['keyword.operator.comparison.hcl']);
  expectScopes(doc, cond, '?', ['keyword.operator.conditional.hcl']);
  expectScopes(doc, cond, 'UNPAUSED', ['string.quoted.double.hcl']);

  // A nested block is a block inside a block.
  const nested = scopes(doc, /^ {2}schedule \{$/, 'schedule');
  assert.ok(nested.includes('entity.name.type.block.hcl'), nested.join(' '));
  assert.equal(nested.filter((s) => s === 'meta.block.hcl').length, 2, `two blocks deep: ${nested.join(' ')}`);

  // Three interpolations in one string.
  const output = doc.lines.find((l) => l.line.includes('value = "${databricks_job.nightly.schedule.quartz'));
  assert.ok(output);
  assert.equal(output.tokens.filter((t) => t.text === '${').length, 3);
  assert.ok(output.tokens.every((t) => t.text.trim() === '' || t.scopes.some((s) => s.startsWith('string.') || s.startsWith('entity.') || s.startsWith('keyword.'))));
});

test('lfc-multi-source: numbers, dynamic blocks, for expressions, module references', async () => {
  const doc = await tokenize(example('lfc-multi-source/main.bf.hcl'));
  expectScopes(doc, 'port            = 1433', 'port', ['entity.other.attribute-name.hcl']);
  expectScopes(doc, 'port            = 1433', '1433', ['constant.numeric.integer.hcl']);
  expectScopes(doc, 'dynamic "task" {', 'dynamic', ['entity.name.type.block.hcl']);
  expectScopes(doc, 'dynamic "task" {', 'task', ['entity.name.label.hcl']);
  const forExpr = 'value       = { for k, m in module.src : k => m.destination_schema }';
  expectScopes(doc, forExpr, 'for', ['meta.braces.hcl', 'keyword.control.hcl']);
  expectScopes(doc, forExpr, 'in', ['keyword.control.hcl']);
  expectScopes(doc, forExpr, 'module', ['variable.language.hcl']);
  expectScopes(doc, forExpr, '=>', ['keyword.operator.arrow.hcl']);
  expectScopes(doc, forExpr, 'destination_schema', ['variable.other.member.hcl']);
});

test('flows-from-csv: function calls, indexes, nested strings in interpolations, null', async () => {
  const doc = await tokenize(example('flows-from-csv/main.bf.hcl'));
  const flows = 'flows = { for row in csvdecode(file("flows.csv")) : row.id => row }';
  expectScopes(doc, flows, 'csvdecode', ['meta.function-call.hcl', 'support.function.hcl']);
  expectScopes(doc, flows, 'file', ['support.function.hcl']);
  expectScopes(doc, flows, 'flows.csv', ['meta.function-call.hcl', 'string.quoted.double.hcl']);
  const db = 'database          = "${databricks_catalog.main.name}.${databricks_schema.layer["bronze"].name}"';
  expectScopes(doc, db, 'bronze', ['meta.interpolation.hcl', 'meta.brackets.hcl', 'string.quoted.double.hcl']);
  expectScopes(doc, db, '.', ['string.quoted.double.hcl'], ['meta.interpolation.hcl', 'punctuation.accessor.hcl'], 2);
  expectScopes(doc, 'table       = each.value.format == "delta"', 'null', ['constant.language.null.hcl']);
  expectScopes(doc, 'table       = each.value.format == "delta"', 'each', ['variable.language.hcl']);
  expectScopes(doc, 'type    = string', 'string', ['storage.type.primitive.hcl']);
});

// The examples have no heredoc, template directive or `//` and `/* */` comment: brickform's
// own heredocs (`<<-EOT`, as `plan` prints them) and the other forms HCL allows.
const TEMPLATES = `resource "databricks_sql_query" "daily" {
  // An indented heredoc, with an interpolation and a directive.
  query_text = <<-EOT
    SELECT * FROM \${var.table}
    %{ for c in var.columns ~}
    WHERE \${c} IS NOT NULL -- EOT is not the end: only a line holding the marker is
    %{~ endfor }
    EOT
  /* a block comment
     over two lines */
  description = <<EOT
Count: 42, $\${kept} and %%{kept}
EOT
  tags     = ["a", "b"]
  ratio    = 0.75
  big      = 1e6
  enabled  = true
  label    = "%{ if var.prod }prod%{ else }dev%{ endif }\\n"
}
`;

test('heredocs, template directives, escapes, other comments and literals', async () => {
  const doc = await tokenize(TEMPLATES);
  assert.equal(doc.endDepth, 1, 'the sample ends at the top level');

  expectScopes(doc, '// An indented heredoc', '//', ['comment.line.double-slash.hcl']);
  expectScopes(doc, 'query_text = <<-EOT', 'query_text', ['entity.other.attribute-name.hcl']);
  expectScopes(doc, 'query_text = <<-EOT', '<<-', ['meta.heredoc.hcl', 'keyword.operator.heredoc.hcl']);
  expectScopes(doc, 'query_text = <<-EOT', 'EOT', ['keyword.control.heredoc.hcl']);

  // The body: text, an interpolation and a directive inside it.
  expectScopes(doc, 'SELECT * FROM', '    SELECT * FROM ', ['string.unquoted.heredoc.hcl'], ['meta.interpolation.hcl', 'keyword.operator.arithmetic.hcl']);
  expectScopes(doc, 'SELECT * FROM', '${', ['string.unquoted.heredoc.hcl', 'punctuation.section.interpolation.begin.hcl']);
  expectScopes(doc, 'SELECT * FROM', 'var', ['string.unquoted.heredoc.hcl', 'meta.interpolation.hcl', 'variable.language.hcl']);
  expectScopes(doc, '%{ for c in var.columns ~}', '%{', ['string.unquoted.heredoc.hcl', 'meta.directive.hcl', 'punctuation.section.directive.begin.hcl']);
  expectScopes(doc, '%{ for c in var.columns ~}', 'for', ['keyword.control.directive.hcl']);
  expectScopes(doc, '%{ for c in var.columns ~}', '~', ['keyword.operator.template.strip.hcl']);
  expectScopes(doc, '%{~ endfor }', 'endfor', ['keyword.control.directive.hcl']);
  expectScopes(doc, 'IS NOT NULL', ' IS NOT NULL -- EOT is not the end: only a line holding the marker is', ['string.unquoted.heredoc.hcl']);

  // The closing marker ends the heredoc: what follows is configuration again.
  expectScopes(doc, /^ {4}EOT$/, 'EOT', ['meta.heredoc.hcl', 'keyword.control.heredoc.hcl'], ['string.unquoted.heredoc.hcl']);
  expectScopes(doc, '/* a block comment', '/*', ['comment.block.hcl']);
  expectScopes(doc, 'over two lines */', '     over two lines ', ['comment.block.hcl']);
  expectScopes(doc, 'description = <<EOT', 'description', ['entity.other.attribute-name.hcl'], ['meta.heredoc.hcl']);

  // A heredoc without the dash, its escapes.
  expectScopes(doc, 'Count: 42', 'Count: 42, ', ['string.unquoted.heredoc.hcl'], ['constant.numeric.integer.hcl']);
  expectScopes(doc, 'Count: 42', '$${', ['string.unquoted.heredoc.hcl', 'constant.character.escape.hcl']);
  expectScopes(doc, 'Count: 42', '%%{', ['constant.character.escape.hcl']);
  expectScopes(doc, /^EOT$/, 'EOT', ['keyword.control.heredoc.hcl']);

  expectScopes(doc, 'tags     =', 'tags', ['entity.other.attribute-name.hcl'], ['meta.heredoc.hcl']);
  expectScopes(doc, 'tags     =', '[', ['punctuation.section.brackets.begin.hcl']);
  expectScopes(doc, 'ratio    = 0.75', '0.75', ['constant.numeric.float.hcl']);
  expectScopes(doc, 'big      = 1e6', '1e6', ['constant.numeric.float.hcl']);
  expectScopes(doc, 'enabled  = true', 'true', ['constant.language.boolean.hcl']);

  // Directives in a quoted string, and an escape.
  const label = 'label    = "%{ if var.prod }';
  expectScopes(doc, label, 'if', ['string.quoted.double.hcl', 'meta.directive.hcl', 'keyword.control.directive.hcl']);
  expectScopes(doc, label, 'else', ['keyword.control.directive.hcl']);
  expectScopes(doc, label, 'endif', ['keyword.control.directive.hcl']);
  expectScopes(doc, label, 'prod', ['meta.directive.hcl', 'variable.other.member.hcl']);
  expectScopes(doc, label, 'prod', ['string.quoted.double.hcl'], ['meta.directive.hcl'], 1);
  expectScopes(doc, label, '\\n', ['constant.character.escape.hcl']);
});
