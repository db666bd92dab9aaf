// conformance-node20.mjs: `node --import` this to run the conformance CLI
// (@modelcontextprotocol/conformance 0.1.16) on Node 20: its bundle
// imports fs.globSync (Node 22), used only by its tier-check command, so
// the bundle is given an fs with a globSync that says so when called.
import { register } from 'node:module';

const shim = "import fs from 'node:fs'; export * from 'node:fs'; " +
    "export default fs; export function globSync() { " +
    "throw new Error('globSync needs Node 22'); }";
const hooks = `
export async function resolve(spec, ctx, next) {
  if ((spec === 'fs' || spec === 'node:fs') && ctx.parentURL &&
      ctx.parentURL.includes('/@modelcontextprotocol/conformance/'))
    return { url: 'data:text/javascript,' +
        encodeURIComponent(${JSON.stringify(shim)}), shortCircuit: true };
  return next(spec, ctx);
}`;
register('data:text/javascript,' + encodeURIComponent(hooks));
