// Build the lab page: bundle src/main.ts (and the CSS it imports) with esbuild and copy
// index.html, into ../src/gradwalk/lab/static/. Deterministic: same sources, same bytes.
// KaTeX's fonts (woff2 only: every browser that runs the page reads it) go to static/fonts/,
// served by the lab itself, so the page stays offline.
import { build } from "esbuild";
import { copyFile, mkdir, readFile, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const outdir = join(here, "..", "src", "gradwalk", "lab", "static");
const outputs = ["index.html", "main.js", "main.css"];

await mkdir(outdir, { recursive: true });
for (const name of [...outputs, "main.js.map", "main.css.map"]) await rm(join(outdir, name), { force: true });
await rm(join(outdir, "fonts"), { recursive: true, force: true });

/** KaTeX's CSS lists each font as woff2, woff and ttf; keep the woff2 only. */
const katexWoff2Only = {
  name: "katex-woff2-only",
  setup(b) {
    b.onLoad({ filter: /katex[\\/]dist[\\/]katex(\.min)?\.css$/ }, async (args) => {
      const css = await readFile(args.path, "utf8");
      return { contents: css.replace(/,\s*url\([^)]*\.woff\) format\("woff"\)|,\s*url\([^)]*\.ttf\) format\("truetype"\)/g, ""), loader: "css", resolveDir: dirname(args.path) };
    });
  },
};

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
  loader: { ".woff2": "file" },
  assetNames: "fonts/[name]-[hash]",
  publicPath: "/",
  plugins: [katexWoff2Only],
});
await copyFile(join(here, "src", "index.html"), join(outdir, "index.html"));
console.log(`built ${outputs.join(", ")} and fonts/ into ${outdir}`);
