"""``python -m gradwalk.lessons``: check, show and record lessons while writing them.

    python -m gradwalk.lessons list
    python -m gradwalk.lessons check [ID ...] [--torch]   # render, compute; --torch: and compare with PyTorch
    python -m gradwalk.lessons show ID                    # the rendered JSON (the API's answer)
    python -m gradwalk.lessons record ID                  # write the lesson's recordings from real PyTorch
"""
import argparse
import json
import sys

from . import CONTENT_DIR, LessonStore
from .check import check_lesson
from .compute import write_recordings
from .parse import LessonError, read_lesson


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m gradwalk.lessons", description=__doc__.split("\n")[0])
    parser.add_argument("--content", default=str(CONTENT_DIR), help="the folder of lesson files")
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("list", help="the lessons, in order")
    check = commands.add_parser("check", help="render and compute lessons, and report every problem")
    check.add_argument("ids", nargs="*", help="lesson ids (default: all)")
    check.add_argument("--torch", action="store_true", help="also compute with real PyTorch and compare")
    show = commands.add_parser("show", help="print a lesson's rendered JSON")
    show.add_argument("id")
    record = commands.add_parser("record", help="record a lesson's recordings on real PyTorch")
    record.add_argument("id")
    args = parser.parse_args(argv)
    store = LessonStore(args.content)

    if args.command == "list":
        for entry in store.index():
            print(f"{entry['order']:>3}  {entry['id']:<20} {entry['title']}")
        return 0
    if args.command == "show":
        print(json.dumps(store.get(args.id), indent=1, ensure_ascii=False))
        return 0
    if args.command == "record":
        for path in write_recordings(read_lesson(store.paths()[args.id])):
            print(f"wrote {path}")
        return 0
    ids = args.ids or list(store.paths())
    failed = 0
    for lesson_id in ids:
        path = store.paths().get(lesson_id)
        if path is None:
            print(f"{lesson_id}: no such lesson in {store.folder}")
            failed += 1
            continue
        problems = check_lesson(path, with_torch=args.torch)
        print(f"{lesson_id}: " + ("ok" if not problems else f"{len(problems)} problem(s)"))
        for problem in problems:
            print(f"  - {problem}")
        failed += bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except LessonError as error:
        print(error, file=sys.stderr)
        sys.exit(1)
