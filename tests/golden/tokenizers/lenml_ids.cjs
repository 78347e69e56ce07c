// Prints @lenml/tokenizers' token ids (the transformers.js tokenizers, an independent JavaScript
// implementation) for each string of JSON corpora, one line per string:
// "<UTF-8 bytes in hex>\t<ids separated by spaces>". Used by the LenmlParity test.
//   node lenml_ids.cjs <@lenml/tokenizers folder> <folder with tokenizer.json> <corpus.json>...
'use strict';
const fs = require('fs');
const path = require('path');

const [libraryDir, modelDir, ...corpora] = process.argv.slice(2);
if (!libraryDir || !modelDir || corpora.length === 0) {
  console.error('usage: node lenml_ids.cjs LIBRARY_DIR MODEL_DIR CORPUS_JSON...');
  process.exit(2);
}
const { TokenizerLoader } = require(path.resolve(libraryDir, 'dist/main.js'));
const read = (name) => JSON.parse(fs.readFileSync(path.join(modelDir, name), 'utf8'));
const tokenizer = TokenizerLoader.fromPreTrained({ tokenizerJSON: read('tokenizer.json'), tokenizerConfig: read('tokenizer_config.json') });
const lines = [];
for (const corpus of corpora)
  for (const text of JSON.parse(fs.readFileSync(corpus, 'utf8')))
    lines.push(Buffer.from(text, 'utf8').toString('hex') + '\t' + tokenizer.encode(text).join(' '));
process.stdout.write(lines.join('\n') + '\n');
