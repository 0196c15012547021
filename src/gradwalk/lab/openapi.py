"""The OpenAPI 3 description of the lab's API (docs/lab-api.md in machine-readable form)."""
import gradwalk

NUMBER = {"oneOf": [{"type": "number"}, {"type": "string", "enum": ["inf", "-inf", "nan"]}]}
NULLABLE_INT = {"type": ["integer", "null"]}

SCHEMAS = {
    "Tensor": {
        "type": "object", "required": ["shape", "dtype", "data"],
        "properties": {
            "shape": {"type": "array", "items": {"type": "integer", "minimum": 0}},
            "dtype": {"type": "string"},
            "data": {"description": "a number (shape []) or nested lists of numbers; non-finite "
                                    "values are the strings inf, -inf, nan"},
        },
    },
    "Detail": {"type": "object", "required": ["detail"], "properties": {"detail": {"type": "string"}}},
    "LessonEntry": {
        "type": "object", "required": ["id", "title", "summary", "order", "sections"],
        "properties": {"id": {"type": "string"}, "title": {"type": "string"}, "summary": {"type": "string"},
                       "order": {"type": "integer"}, "error": {"type": "string"},
                       "sections": {"type": "array", "items": {
                           "type": "object", "required": ["id", "title"],
                           "properties": {"id": {"type": "string"}, "title": {"type": "string"}}}}},
    },
    "Error": {
        "type": "object", "required": ["type", "message", "line", "col"],
        "properties": {
            "type": {"type": "string", "examples": ["RuntimeError", "SnippetError", "LimitError"]},
            "message": {"type": "string"},
            "line": NULLABLE_INT,
            "col": NULLABLE_INT,
        },
    },
    "GraphNode": {
        "type": "object", "required": ["id", "name", "seq", "kind", "variable", "saved",
                                       "dependencies", "forward"],
        "properties": {
            "id": {"type": "string"}, "name": {"type": "string"}, "seq": NULLABLE_INT,
            "kind": {"type": "string", "enum": ["function", "accumulate", "root"]},
            "variable": {"type": ["string", "null"]},
            "saved": {"type": "array", "items": {
                "type": "object", "required": ["name", "value", "freed"],
                "properties": {"name": {"type": "string"},
                               "value": {"oneOf": [{"$ref": "#/components/schemas/Tensor"},
                                                   {"type": "null"}]},
                               "freed": {"type": "boolean"}}}},
            "dependencies": {"type": "integer"},
            "forward": {"oneOf": [{"type": "null"}, {
                "type": "object", "required": ["name", "value"],
                "properties": {"name": {"type": "string"},
                               "value": {"$ref": "#/components/schemas/Tensor"}}}]},
        },
    },
    "Graph": {
        "type": "object", "required": ["root", "seed", "nodes", "edges"],
        "properties": {
            "root": {"type": "string"},
            "seed": {"oneOf": [{"$ref": "#/components/schemas/Tensor"}, {"type": "null"}]},
            "nodes": {"type": "array", "items": {"$ref": "#/components/schemas/GraphNode"}},
            "edges": {"type": "array", "items": {
                "type": "object", "required": ["from", "to", "output", "input_nr"],
                "properties": {"from": {"type": "string"}, "to": {"type": "string"},
                               "output": {"type": "integer"}, "input_nr": {"type": "integer"}}}},
        },
    },
    "Step": {
        "type": "object",
        "required": ["index", "node", "name", "seq", "grad_in", "grads_out", "dependencies",
                     "buffers", "ready", "released", "leaf_grads", "text"],
        "properties": {
            "index": {"type": "integer"}, "node": {"type": "string"}, "name": {"type": "string"},
            "seq": NULLABLE_INT,
            "grad_in": {"type": "array"}, "grads_out": {"type": "array"},
            "dependencies": {"type": "array"}, "buffers": {"type": "array"},
            "ready": {"type": "array"}, "released": {"type": "array", "items": {"type": "string"}},
            "leaf_grads": {"type": "array"}, "text": {"type": "string"},
        },
    },
    "Pass": {
        "type": "object", "required": ["call", "line", "graph", "steps", "grads", "error"],
        "properties": {
            "call": {"type": "string"}, "line": NULLABLE_INT,
            "graph": {"$ref": "#/components/schemas/Graph"},
            "steps": {"type": "array", "items": {"$ref": "#/components/schemas/Step"}},
            "grads": {"type": "object"},
            "error": {"oneOf": [{"$ref": "#/components/schemas/Error"}, {"type": "null"}]},
        },
    },
    "RunRequest": {
        "type": "object", "required": ["source"], "additionalProperties": False,
        "properties": {
            "source": {"type": "string", "description": "the snippet (Python syntax)"},
            "mode": {"type": "string", "enum": ["pytorch", "topo"], "default": "pytorch"},
            "sequence_start": {
                "type": "integer", "minimum": 0, "default": 0,
                "description": "the thread-local sequence counter's value when the snippet "
                               "starts: 0 is a fresh Python; the previous answer's "
                               "next_sequence_nr records a new graph with new sequence numbers, "
                               "as running the forward pass again in PyTorch does. Above the "
                               "limit: 422"},
            "earlier_passes": {
                "type": "integer", "minimum": 0, "default": 0,
                "description": "how many times the snippet's forward and backward ran before on "
                               "the same leaves (the page's New forward pass): each leaf starts "
                               "with the .grad they left, and backward() adds into it, as in "
                               "PyTorch. Over 50: 422"},
        },
    },
    "RunResponse": {
        "type": "object",
        "required": ["ok", "mode", "leaves", "values", "passes", "prints", "error",
                     "next_sequence_nr"],
        "properties": {
            "ok": {"type": "boolean"},
            "mode": {"type": ["string", "null"], "enum": ["pytorch", "topo", None]},
            "leaves": {"type": "array", "items": {
                "type": "object", "required": ["name", "value", "grad", "node"],
                "properties": {"name": {"type": "string"},
                               "value": {"$ref": "#/components/schemas/Tensor"},
                               "grad": {"oneOf": [{"$ref": "#/components/schemas/Tensor"},
                                                  {"type": "null"}]},
                               "node": {"type": ["string", "null"]}}}},
            "values": {"type": "array", "items": {
                "type": "object", "required": ["name", "line", "value", "grad_fn", "seq"],
                "properties": {"name": {"type": "string"}, "line": NULLABLE_INT,
                               "value": {"$ref": "#/components/schemas/Tensor"},
                               "grad_fn": {"type": ["string", "null"]}, "seq": NULLABLE_INT}}},
            "passes": {"type": "array", "items": {"$ref": "#/components/schemas/Pass"}},
            "prints": {"type": "array", "items": {"type": "string"}},
            "error": {"oneOf": [{"$ref": "#/components/schemas/Error"}, {"type": "null"}]},
            "next_sequence_nr": {"type": "integer", "minimum": 0,
                                 "description": "the sequence counter after the run: send it as "
                                                "sequence_start to run the forward pass again"},
            "detail": {"type": "string", "description": "only on refusals: the error in words"},
        },
    },
    "Refusal": {
        "type": "object", "required": ["detail", "error"],
        "properties": {"detail": {"type": "string"},
                       "error": {"$ref": "#/components/schemas/Error"}},
    },
    "Preset": {
        "type": "object", "required": ["id", "title", "source"],
        "properties": {"id": {"type": "string"}, "title": {"type": "string"},
                       "source": {"type": "string"}},
    },
}


def _json(schema_name, description):
    return {"description": description,
            "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{schema_name}"}}}}


def openapi_description(limits):
    refused = "The snippet was refused; `error` says why, with line and column."
    schemas = {**SCHEMAS, "RunRequest": {**SCHEMAS["RunRequest"], "properties": {
        **SCHEMAS["RunRequest"]["properties"], "sequence_start": {
            **SCHEMAS["RunRequest"]["properties"]["sequence_start"],
            "maximum": limits.sequence_start}}}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "gradwalk lab", "version": gradwalk.__version__,
                 "description": "Run a PyTorch snippet on gradwalk and get every step of its "
                                "backward passes. See docs/lab-api.md."},
        "paths": {
            "/api/run": {"post": {
                "operationId": "run",
                "summary": "Run a snippet and record its backward passes step by step",
                "requestBody": {"required": True, "content": {"application/json": {
                    "schema": {"$ref": "#/components/schemas/RunRequest"}}}},
                "responses": {
                    "200": _json("RunResponse", "The snippet ran; `ok` is false if it raised "
                                                "(the error is in `error` or in a pass)."),
                    "400": _json("Refusal", "Bad JSON, or a syntax error or construct the lab "
                                            "does not allow. " + refused),
                    "413": _json("Refusal", f"The body is larger than {limits.body_bytes:,} "
                                            f"bytes."),
                    "415": _json("Refusal", "The body is not sent as application/json."),
                    "422": _json("Refusal", "The snippet went over a limit (size, elements, "
                                            "graph, exponent, time, memory), or "
                                            "sequence_start is over "
                                            f"{limits.sequence_start:,}. " + refused),
                    "503": _json("Refusal", "Too many snippets running at once: try again after "
                                            "the Retry-After header's seconds."),
                },
            }},
            "/api/lessons": {"get": {
                "operationId": "lessons", "summary": "The lessons in order (docs/lessons-api.md)",
                "responses": {"200": {"description": "id, title, summary, order and sections of each",
                                      "content": {"application/json": {"schema": {
                                          "type": "array", "items": {"$ref": "#/components/schemas/LessonEntry"}}}}}},
            }},
            "/api/lessons/{id}": {"get": {
                "operationId": "lesson", "summary": "One lesson, rendered, its numbers computed by gradwalk",
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
                "responses": {
                    "200": {"description": "The lesson (docs/lessons-api.md)", "content": {
                        "application/json": {"schema": {"type": "object", "required": [
                            "id", "title", "summary", "order", "intro", "sections", "glossary", "numbers"]}}}},
                    "404": _json("Detail", "No lesson has this id."),
                    "500": _json("Detail", "The lesson's file has a problem (named in detail)."),
                },
            }},
            "/api/presets": {"get": {
                "operationId": "presets", "summary": "The example snippets",
                "responses": {"200": {"description": "The presets", "content": {
                    "application/json": {"schema": {
                        "type": "array", "items": {"$ref": "#/components/schemas/Preset"}}}}}},
            }},
            "/api/health": {"get": {
                "operationId": "health", "summary": "Is the server up",
                "responses": {"200": {"description": "It is", "content": {"application/json": {
                    "schema": {"type": "object", "required": ["status", "version"],
                               "properties": {"status": {"const": "ok"},
                                              "version": {"type": "string"},
                                              "workers": {"type": "integer"}}}}}}},
            }},
        },
        "components": {"schemas": schemas},
    }
