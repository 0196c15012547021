// Build the lab page: bundle src/main.ts (and the CSS it imports) with esbuild and copy
// index.html, into ../src/gradwalk/lab/static/. Deterministic: same sources, same bytes.
import { build } from "esbuild";
import { copyFile, mkdir, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const outdir = join(here, "..", "src", "gradwalk", "lab", "static");
const outputs = ["index.html", "main.js", "main.css"];

await mkdir(outdir, { recursive: true });
for (const name of [...outputs, "main.js.map", "main.css.map"]) await rm(join(outdir, name), { force: true });

await build({
  entryPoints: [join(here, "src", "main.ts")],
  outfile: join(outdir, "main.js"),
  bundle: true,
  format: "esm",
  target: "es2022",
  minify: true,
  legalComments: "none",
  charset: "utf8",
  logLevel: "warning",
});
await copyFile(join(here, "src", "index.html"), join(outdir, "index.html"));
console.log(`built ${outputs.join(", ")} into ${outdir}`);
