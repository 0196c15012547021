// A tiny dev server for working on the page without the Python server (node's http module only).
// It serves the built static dir and answers the API from hand-written fixtures in test-fixtures/:
//   GET  /api/presets  -> test-fixtures/presets.json
//   POST /api/run      -> test-fixtures/run-neuron.json, whatever the source, except that
//                         - a line with unbalanced brackets gives a SyntaxError (to see error display);
//                         - each extra `.backward()` line adds a pass, derived from the first one:
//                           PyTorch's "second time" error, or (with retain_graph=True in the first
//                           call) the same steps again with the gradients accumulated.
//   GET  /api/lessons       -> test-fixtures/lessons.json
//   GET  /api/lessons/<id>  -> test-fixtures/lesson-<id>.json (404 {"detail"} when missing)
//   GET  /, /lab, /lessons/<id>, /figures/<id>  -> index.html (the page routes on the path)
// With --api http://127.0.0.1:8000 (a running `gradwalk lab`), every other /api/ request (the
// figures, the PyTorch check, and /api/run itself) is passed on to that server.
// Usage: node dev-server.mjs [port] [--api URL]   (default 8765), then open http://127.0.0.1:8765/
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { dirname, extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const staticDir = join(here, "..", "src", "gradwalk", "lab", "static");
const fixtures = join(here, "test-fixtures");
const args = process.argv.slice(2);
const apiAt = args.includes("--api") ? args.splice(args.indexOf("--api"), 2)[1] : null;
const port = Number(args[0] ?? process.env.PORT ?? 8765);
const PAGES = /^\/(lab|lessons\/[\w-]+|figures\/[\w-]+)?\/?$/;

const TYPES = { ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css", ".json": "application/json", ".woff2": "font/woff2" };
const SECOND_TIME =
  "Trying to backward through the graph a second time (or directly access saved tensors after they have " +
  "already been freed). Saved intermediate values of the graph are freed when you call .backward() or " +
  "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or " +
  "if you need to access saved tensors after calling backward.";

const fixture = async (name) => JSON.parse(await readFile(join(fixtures, name), "utf8"));
const scalar = (data) => ({ shape: [], dtype: "float32", data });
const times = (t, k) => (t ? scalar(t.data * k) : t);

function syntaxError(source) {
  const lines = source.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const stack = [];
    for (let c = 0; c < lines[i].length; c++) {
      const ch = lines[i][c];
      if ("([{".includes(ch)) stack.push(c);
      if (")]}".includes(ch)) {
        if (!stack.length) return { type: "SyntaxError", message: `unmatched '${ch}'`, line: i + 1, col: c + 1 };
        stack.pop();
      }
    }
    if (stack.length) {
      return { type: "SyntaxError", message: `'${lines[i][stack[0]]}' was never closed`, line: i + 1, col: stack[0] + 1 };
    }
  }
  return null;
}

async function answerRun({ source = "", mode = "pytorch" }) {
  const run = await fixture("run-neuron.json");
  run.mode = mode;
  const error = syntaxError(source);
  if (error) return { ...run, ok: false, leaves: [], values: [], passes: [], error };
  const calls = [...source.split("\n").entries()].filter(([, l]) => /\.backward\(/.test(l));
  if (!calls.length) return { ...run, passes: [] };
  const first = run.passes[0];
  [first.line, first.call] = [calls[0][0] + 1, calls[0][1].trim()];
  const retain = /retain_graph\s*=\s*True/.test(calls[0][1]);
  for (const [k, [i, line]] of calls.slice(1).entries()) {
    const pass = structuredClone(first);
    [pass.line, pass.call] = [i + 1, line.trim()];
    if (!retain) {
      for (const n of pass.graph.nodes) for (const s of n.saved) s.freed = true;
      pass.steps = [];
      pass.grads = structuredClone(run.passes.at(-1).grads);
      pass.error = { type: "RuntimeError", message: SECOND_TIME, line: i + 1, col: 1 };
      run.ok = false;
    } else {
      for (const step of pass.steps) {
        step.released = [];
        step.text = step.text.replace(/, freed its saved.*$/, "");
        for (const w of step.leaf_grads) w.value = times(w.value, k + 2);
      }
      for (const name of Object.keys(pass.grads)) pass.grads[name] = times(first.grads[name], k + 2);
    }
    run.passes.push(pass);
  }
  if (retain) for (const step of first.steps) step.released = [];
  for (const leaf of run.leaves) leaf.grad = run.passes.at(-1).grads[leaf.name];
  return run;
}

function send(res, status, body, type = "application/json") {
  res.writeHead(status, { "Content-Type": type, "Cache-Control": "no-store" });
  res.end(typeof body === "string" || Buffer.isBuffer(body) ? body : JSON.stringify(body));
}

createServer(async (req, res) => {
  try {
    const url = new URL(req.url, "http://localhost");
    if (url.pathname === "/api/health") return send(res, 200, { status: "ok", version: "dev" });
    if (url.pathname === "/api/presets") return send(res, 200, await fixture("presets.json"));
    if (url.pathname === "/api/lessons") return send(res, 200, await fixture("lessons.json"));
    const lesson = /^\/api\/lessons\/([\w-]+)$/.exec(url.pathname);
    if (lesson) {
      try {
        return send(res, 200, await fixture(`lesson-${lesson[1]}.json`));
      } catch {
        return send(res, 404, { detail: `no lesson named '${lesson[1]}'` });
      }
    }
    if (apiAt && url.pathname.startsWith("/api/")) {
      let body;
      if (req.method === "POST") {
        body = "";
        for await (const chunk of req) body += chunk;
      }
      const answer = await fetch(new URL(url.pathname + url.search, apiAt), { method: req.method, headers: { "Content-Type": req.headers["content-type"] ?? "application/json" }, body });
      return send(res, answer.status, Buffer.from(await answer.arrayBuffer()), answer.headers.get("content-type") ?? "application/json");
    }
    if (PAGES.test(url.pathname)) return send(res, 200, await readFile(join(staticDir, "index.html")), TYPES[".html"]);
    if (url.pathname === "/api/run" && req.method === "POST") {
      let body = "";
      for await (const chunk of req) body += chunk;
      return send(res, 200, await answerRun(JSON.parse(body || "{}")));
    }
    let path = url.pathname.replace(/^\/static\//, "/");
    if (path.endsWith("/")) path += "index.html";
    const file = normalize(join(staticDir, path));
    if (!file.startsWith(staticDir)) return send(res, 403, "forbidden", "text/plain");
    return send(res, 200, await readFile(file), TYPES[extname(file)] ?? "application/octet-stream");
  } catch (e) {
    return send(res, e.code === "ENOENT" ? 404 : 500, String(e), "text/plain");
  }
}).listen(port, "127.0.0.1", () => console.log(`gradwalk lab dev server on http://127.0.0.1:${port}/`));
