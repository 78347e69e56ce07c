// Samples a d3-scale-chromatic@3.1.1 interpolator at t = i/255 (i = 0..255, or 1 - i/255 with
// "reverse") and prints "r,g,b" lines: resources/colormaps/README.md. Usage: node gen.cjs NAME [reverse]
// The packages are ESM-typed, so their UMD dist files are evaluated by hand.
const fs = require('fs');
const load = (file, deps) => {
  const module = { exports: {} };
  const req = name => { if (!(name in deps)) throw new Error(name); return deps[name]; };
  new Function('exports', 'require', 'module', fs.readFileSync(file, 'utf8'))(module.exports, req, module);
  return module.exports;
};
const color = load(__dirname + '/node_modules/d3-color/dist/d3-color.js', {});
const interp = load(__dirname + '/node_modules/d3-interpolate/dist/d3-interpolate.js', { 'd3-color': color });
const d3 = load(__dirname + '/package/dist/d3-scale-chromatic.js', { 'd3-color': color, 'd3-interpolate': interp });
const [name, reverse] = [process.argv[2], process.argv[3] === 'reverse'];
const rows = [];
for (let i = 0; i < 256; ++i) {
  const c = color.rgb(d3[name](reverse ? 1 - i / 255 : i / 255));
  rows.push([c.r, c.g, c.b].map(v => Math.max(0, Math.min(255, Math.round(v)))).join(','));
}
console.log(rows.join('\n'));
