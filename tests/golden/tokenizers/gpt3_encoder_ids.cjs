// Prints gpt-3-encoder's token ids for each string of a JSON corpus, one line per string:
// "<UTF-8 bytes in hex>\t<ids separated by spaces>". Used by the Gpt2Parity test.
//   node gpt3_encoder_ids.cjs <gpt-3-encoder package folder> <corpus.json>
'use strict';
const fs = require('fs');
const path = require('path');

const [packageDir, corpusPath] = process.argv.slice(2);
if (!packageDir || !corpusPath) {
  console.error('usage: node gpt3_encoder_ids.cjs PACKAGE_DIR CORPUS_JSON');
  process.exit(2);
}
const { encode } = require(path.resolve(packageDir, 'Encoder.js'));
const corpus = JSON.parse(fs.readFileSync(corpusPath, 'utf8'));
const lines = corpus.map((text) => Buffer.from(text, 'utf8').toString('hex') + '\t' + encode(text).join(' '));
process.stdout.write(lines.join('\n') + '\n');
