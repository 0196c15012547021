"""HTTP routes of the lessons (docs/lessons-api.md) and of the page's own addresses.

    GET /api/lessons          the lessons in order: id, title, summary, order, sections
    GET /api/lessons/<id>     one lesson, rendered, with every number computed by gradwalk
    GET / , /lab, /lessons/<id>, /figures/<id>     the page (it routes on the path)

A lesson is computed in a child process the first time it is asked for (a few seconds) and kept
until its file changes; the first ``GET /api/lessons`` starts computing all of them in the
background, so a student who opens a lesson from the start page rarely waits.
"""
import threading
from pathlib import Path

import anyio
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Route

from ..lessons import CONTENT_DIR, LessonError, LessonStore


def routes(static_dir, missing_page, lessons_dir=None):
    store = LessonStore(Path(lessons_dir) if lessons_dir else CONTENT_DIR)
    warming = threading.Event()
    index_html = Path(static_dir) / "index.html"

    async def lesson_index(request):
        if not warming.is_set():
            warming.set()
            threading.Thread(target=store.warm, name="gradwalk-lessons-warm", daemon=True).start()
        return JSONResponse(store.index())

    async def lesson(request):
        lesson_id = request.path_params["id"]
        try:
            return JSONResponse(await anyio.to_thread.run_sync(store.get, lesson_id))
        except KeyError:
            return JSONResponse({"detail": f"no lesson named {lesson_id!r}"}, status_code=404)
        except LessonError as error:
            return JSONResponse({"detail": f"the lesson {lesson_id!r} cannot be shown: {error}"},
                                status_code=500)

    async def page(request):
        if not index_html.is_file():
            return await missing_page(request)
        return FileResponse(index_html, media_type="text/html")

    return [
        Route("/api/lessons", lesson_index, methods=["GET"]),
        Route("/api/lessons/{id:str}", lesson, methods=["GET"]),
        Route("/", page, methods=["GET", "HEAD"]),
        Route("/lab", page, methods=["GET", "HEAD"]),
        Route("/lessons/{id:str}", page, methods=["GET", "HEAD"]),
        Route("/figures/{id:str}", page, methods=["GET", "HEAD"]),
    ]
